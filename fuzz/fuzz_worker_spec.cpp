// The files a worker and its supervisor exchange in the worker's directory
// (worker/process/worker_spec.hpp): the first input byte picks spec.json, read
// by the worker with spec_from_json (even), or the heartbeat file, read by the
// supervisor with heartbeat_from_json (odd).
//
// Checks: a file that reads writes back (spec_to_json, heartbeat_to_json)
// without throwing into text that reads again to the same value, and that
// text is stable (written again, it is the same).
#include "fuzz/fuzz_check.hpp"
#include "worker/process/worker_spec.hpp"

namespace rstorm::fuzz {
namespace {

namespace wp = worker_process;

bool same_config(const Config& a, const Config& b) {
  if (a.entries().size() != b.entries().size()) return false;
  for (const auto& [key, entry] : a.entries()) {
    const Config::Entry* e = b.find(key);
    if (e == nullptr || e->origin != entry.origin ||
        e->value.type_name() != entry.value.type_name() ||
        e->value.to_string() != entry.value.to_string()) {
      return false;
    }
  }
  return true;
}

bool same_spec(const wp::WorkerSpec& a, const wp::WorkerSpec& b) {
  return a.topology_id == b.topology_id && a.topology_name == b.topology_name &&
         a.library == b.library && a.supervisor_id == b.supervisor_id && a.host == b.host &&
         a.port == b.port && a.worker_dir == b.worker_dir &&
         a.assignment_version == b.assignment_version && a.executors == b.executors &&
         a.node_hosts == b.node_hosts && a.heartbeat_interval_ms == b.heartbeat_interval_ms &&
         same_config(a.config, b.config);
}

void check_spec(std::string_view text) {
  auto spec = wp::spec_from_json(text);
  if (!spec) return;
  const std::string written = wp::spec_to_json(*spec);
  auto again = wp::spec_from_json(written);
  fuzz_check(again.is_ok(), "a written spec reads");
  fuzz_check(same_spec(*spec, *again), "a written spec reads to the same spec");
  fuzz_check(wp::spec_to_json(*again) == written, "a spec is written the same way twice");
}

void check_heartbeat(std::string_view text) {
  auto beat = wp::heartbeat_from_json(text);
  if (!beat) return;
  const std::string written = wp::heartbeat_to_json(*beat);
  auto again = wp::heartbeat_from_json(written);
  fuzz_check(again.is_ok(), "a written heartbeat reads");
  fuzz_check(wp::heartbeat_to_json(*again) == written, "a heartbeat is written the same way twice");
  fuzz_check(again->time_ms == beat->time_ms && again->pid == beat->pid &&
                 again->topology_id == beat->topology_id && again->port == beat->port &&
                 again->active == beat->active && again->executors == beat->executors &&
                 again->components == beat->components && again->data_plane == beat->data_plane &&
                 again->errors == beat->errors,
             "a written heartbeat reads to the same heartbeat");
  // A stall is written only while there is one (stalled_ms > 0).
  if (beat->stalled_ms > 0) {
    fuzz_check(again->stalled_ms == beat->stalled_ms &&
                   again->stall_pending == beat->stall_pending &&
                   again->stalled_spouts == beat->stalled_spouts && again->queued == beat->queued &&
                   again->full_queues == beat->full_queues,
               "a written stall reads to the same stall");
  }
}

}  // namespace
}  // namespace rstorm::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rstorm::fuzz;
  if (size == 0) return 0;
  const auto input = select(data, size, 2);
  if (input.choice == 0) {
    check_spec(input.bytes);
  } else {
    check_heartbeat(input.bytes);
  }
  return 0;
}
