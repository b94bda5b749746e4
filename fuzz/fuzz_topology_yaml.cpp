// Topology and cluster descriptions in YAML (scheduler/yaml_loader.hpp, read
// by `rstorm schedule`, the tests and the benches; examples/paper/*.yaml and
// conf/clusters/*.yaml are the real ones). The first input byte picks
// parse_topology (even) or parse_cluster (odd).
//
// Checks, from the loader's contract: an error names the file; a topology has
// uniquely named components, a spout, edges between its components, and per
// component `parallelism` executors whose task ranges follow each other from
// task 1; a cluster has uniquely named nodes, each in a named rack, with
// distinct slot ports.
#include <set>

#include "fuzz/fuzz_check.hpp"
#include "scheduler/yaml_loader.hpp"

namespace rstorm::fuzz {
namespace {

constexpr char kOrigin[] = "input.yaml";

void check_topology(const scheduler::TopologyRequest& t) {
  std::set<std::string> names;
  bool spout = false;
  int next_task = 1;
  std::size_t executor = 0;
  for (const scheduler::ComponentSpec& c : t.components) {
    fuzz_check(!c.name.empty() && names.insert(c.name).second, "component names are unique");
    spout = spout || c.is_spout;
    fuzz_check(c.parallelism >= 1 && (c.tasks == 0 || c.tasks >= c.parallelism),
               "a component has at least one executor and a task per executor");
    const int tasks = c.tasks > 0 ? c.tasks : c.parallelism;
    const int first_task = next_task;
    for (int i = 0; i < c.parallelism; ++i, ++executor) {
      fuzz_check(executor < t.executors.size(), "every executor of a component is requested");
      const scheduler::ExecutorRequest& e = t.executors[executor];
      fuzz_check(e.component == c.name && e.first_task == next_task && e.last_task >= e.first_task,
                 "executors' task ranges follow each other");
      next_task = e.last_task + 1;
    }
    fuzz_check(next_task - first_task == tasks, "a component's executors run all its tasks");
  }
  fuzz_check(executor == t.executors.size(), "no executor without a component");
  fuzz_check(spout, "a topology has a spout");
  for (const scheduler::Edge& e : t.edges) {
    fuzz_check(names.contains(e.from) && names.contains(e.to), "edges join known components");
  }
}

void check_cluster(const scheduler::Cluster& c) {
  std::set<std::string> ids;
  for (const scheduler::NodeSpec& n : c.nodes) {
    fuzz_check(!n.id.value().empty() && ids.insert(n.id.value()).second, "node ids are unique");
    fuzz_check(!n.rack.value().empty(), "a node is in a named rack");
    fuzz_check(std::set<int>(n.ports.begin(), n.ports.end()).size() == n.ports.size(),
               "a node's slot ports are distinct");
  }
}

template <typename T>
bool failed_with_origin(const scheduler::Result<T>& r) {
  if (r) return false;
  fuzz_check(r.error().message.starts_with(kOrigin), "an error names the file");
  return true;
}

}  // namespace
}  // namespace rstorm::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rstorm::fuzz;
  if (size == 0) return 0;
  const auto input = select(data, size, 2);
  const std::string text(input.bytes);
  if (input.choice == 0) {
    auto topology = rstorm::scheduler::parse_topology(text, kOrigin);
    if (!failed_with_origin(topology)) check_topology(topology.value());
  } else {
    auto cluster = rstorm::scheduler::parse_cluster(text, kOrigin);
    if (!failed_with_origin(cluster)) check_cluster(cluster.value());
  }
  return 0;
}
