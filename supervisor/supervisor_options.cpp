#include "supervisor/supervisor_options.hpp"

#include <cmath>
#include <fstream>
#include <sstream>
#include <thread>

namespace rstorm::supervisor {
namespace {

std::chrono::seconds secs(const Config& config, std::string_view key,
                          std::chrono::seconds fallback) {
  return std::chrono::seconds(config.get_int(key, fallback.count()));
}

}  // namespace

bool set_by_user(const Config& config, std::string_view key) {
  const auto* entry = config.find(key);
  return entry != nullptr && entry->origin.rfind("defaults.yaml", 0) != 0;
}

double machine_memory_mb() {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("MemTotal:", 0) != 0) continue;
    std::istringstream fields(line.substr(9));
    double kb = 0;
    fields >> kb;
    return kb / 1024.0;
  }
  return 0;
}

double machine_cpu_points() {
  const unsigned cores = std::thread::hardware_concurrency();
  return 100.0 * (cores == 0 ? 1 : cores);
}

std::filesystem::path executable_dir() {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::current_path() : self.parent_path();
}

Result<SupervisorOptions> SupervisorOptions::from_config(const Config& config) {
  SupervisorOptions o;
  try {
    if (const auto* id = config.find("supervisor.id"); id != nullptr && !id->value.is_null()) {
      o.id = config.get_string("supervisor.id");
    }
    o.host = config.get_string("storm.local.hostname", o.host);
    o.rack = config.get_string("supervisor.rack", o.rack);
    const double machine_memory = machine_memory_mb();
    o.memory_mb = set_by_user(config, "supervisor.memory.capacity.mb") || machine_memory <= 0
                      ? config.get_double("supervisor.memory.capacity.mb", o.memory_mb)
                      : std::floor(machine_memory);
    o.cpu = set_by_user(config, "supervisor.cpu.capacity")
                ? config.get_double("supervisor.cpu.capacity", o.cpu)
                : machine_cpu_points();
    if (config.contains("supervisor.slots.ports")) {
      o.ports.clear();
      for (auto p : config.get_int_list("supervisor.slots.ports")) o.ports.push_back(static_cast<int>(p));
    }
    if (const auto* r = config.find("supervisor.resources.map"); r != nullptr && !r->value.is_null()) {
      for (const auto& item : config.get_string_list("supervisor.resources.map")) {
        const auto eq = item.find('=');
        char* end = nullptr;
        const double amount = eq == std::string::npos ? 0 : std::strtod(item.c_str() + eq + 1, &end);
        if (eq == std::string::npos || eq == 0 || end == nullptr || *end != '\0') {
          return Status(ErrorCode::kInvalidArgument,
                        "supervisor.resources.map (" + r->origin + "): '" + item +
                            "' is not name=amount, e.g. gpu.count=2");
        }
        o.generic[item.substr(0, eq)] = amount;
      }
    }
    o.local_dir = config.get_string("storm.local.dir", o.local_dir.string());
    o.zookeeper_root = config.get_string("storm.zookeeper.root", o.zookeeper_root);
    o.worker_timeout = secs(config, "supervisor.worker.timeout.secs", o.worker_timeout);
    o.worker_start_timeout =
        secs(config, "supervisor.worker.start.timeout.secs", o.worker_start_timeout);
    o.heartbeat_frequency =
        secs(config, "supervisor.heartbeat.frequency.secs", o.heartbeat_frequency);
    o.monitor_frequency = secs(config, "supervisor.monitor.frequency.secs", o.monitor_frequency);
    o.shutdown_wait = secs(config, "supervisor.worker.shutdown.sleep.secs", o.shutdown_wait);
    o.orphan_timeout = secs(config, "nimbus.supervisor.timeout.secs", o.orphan_timeout);
    o.worker_heartbeat_ms =
        static_cast<int>(1000 * config.get_double("worker.heartbeat.frequency.secs", 1.0));
    for (const auto& [key, entry] : config.entries()) {
      // Workers reach nimbus as its clients do (checkpoints), with the CA only.
      if (key.starts_with("worker.") || key.starts_with("storm.messaging.") ||
          key.starts_with("storm.metrics.") || key == "nimbus.thrift.client.use.tls" ||
          key == "nimbus.thrift.tls.client.ca.path") {
        o.worker_config.set(key, entry.value, entry.origin);
      }
    }
  } catch (const ConfigError& e) {
    return Status(ErrorCode::kInvalidArgument, e.what());
  }
  if (o.ports.empty()) {
    return Status(ErrorCode::kInvalidArgument, "supervisor.slots.ports is empty: no worker slot");
  }
  for (auto [key, value] : {std::pair<const char*, std::int64_t>{"supervisor.worker.timeout.secs",
                                                                 o.worker_timeout.count()},
                            {"supervisor.heartbeat.frequency.secs", o.heartbeat_frequency.count()},
                            {"supervisor.monitor.frequency.secs", o.monitor_frequency.count()}}) {
    if (value < 1) {
      return Status(ErrorCode::kInvalidArgument,
                    std::string(key) + " must be at least 1, got " + std::to_string(value));
    }
  }
  if (o.worker_heartbeat_ms < 1) {
    return Status(ErrorCode::kInvalidArgument, "worker.heartbeat.frequency.secs must be positive");
  }
  o.worker_binary = executable_dir() / "rstorm-worker";
  return o;
}

}  // namespace rstorm::supervisor
