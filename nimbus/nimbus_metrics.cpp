#include "nimbus/nimbus_metrics.hpp"

#include <map>

namespace rstorm::nimbus {
namespace {

constexpr double kBytesPerMb = 1024.0 * 1024.0;
constexpr double kPointsPerCore = 100.0;

const char* status_name(thrift::TopologyStatus::type s) {
  switch (s) {
    case thrift::TopologyStatus::ACTIVE: return "active";
    case thrift::TopologyStatus::INACTIVE: return "inactive";
    case thrift::TopologyStatus::KILLED: return "killed";
    case thrift::TopologyStatus::REBALANCING: return "rebalancing";
    case thrift::TopologyStatus::UNSCHEDULABLE: return "unschedulable";
  }
  return "unknown";
}

void collect_cluster(Nimbus& nimbus, metrics::Snapshot& out) {
  auto cluster = nimbus.cluster_info();
  if (!cluster) return;
  for (const auto& s : cluster->supervisors) {
    const metrics::Labels l = {{"node", s.info.id}, {"host", s.info.host}, {"rack", s.info.rack}};
    out.gauge("rstorm_node_memory_capacity_bytes", "Memory a node offers to workers", l,
              s.info.memory_capacity_mb * kBytesPerMb);
    out.gauge("rstorm_node_memory_assigned_bytes", "Memory of the executors assigned to a node", l,
              s.used_memory_mb * kBytesPerMb);
    out.gauge("rstorm_node_cpu_capacity_cores", "CPU a node offers (100 points = 1 core)", l,
              s.info.cpu_capacity / kPointsPerCore);
    out.gauge("rstorm_node_cpu_assigned_cores", "CPU of the executors assigned to a node", l,
              s.used_cpu / kPointsPerCore);
    out.gauge("rstorm_node_slots", "Worker slots of a node", l,
              static_cast<double>(s.info.slots.size()));
    out.gauge("rstorm_node_slots_used", "Worker slots of a node with an assigned worker", l,
              static_cast<double>(s.num_used_workers));
  }
  std::map<std::string, int> by_status = {
      {"active", 0}, {"inactive", 0}, {"rebalancing", 0}, {"unschedulable", 0}};
  for (const auto& t : cluster->topologies) {
    ++by_status[status_name(t.status)];
    if (t.status == thrift::TopologyStatus::KILLED) continue;
    auto placement = nimbus.placement(t.id);
    // Not placed (yet): no assignment, no cost. (__isset is not set by
    // __set_ on fields without `optional`.)
    if (!placement || placement->assignment.executors.empty()) continue;
    const auto& n = placement->network;
    const std::pair<const char*, std::int64_t> pairs[] = {{"same_worker", n.same_worker},
                                                          {"same_node", n.same_node},
                                                          {"same_rack", n.same_rack},
                                                          {"cross_rack", n.cross_rack}};
    for (const auto& [distance, count] : pairs) {
      out.gauge("rstorm_topology_network_cost_pairs",
                "Communicating executor pairs of a topology by how far apart they are placed",
                {{"topology", t.name}, {"distance", distance}}, static_cast<double>(count));
    }
  }
  for (const auto& [status, count] : by_status) {
    out.gauge("rstorm_topologies", "Topologies known to nimbus, by status", {{"status", status}},
              count);
  }
  out.gauge("rstorm_unschedulable_topologies",
            "Submitted topologies that do not fit the cluster (status unschedulable)", {},
            by_status["unschedulable"]);
}

}  // namespace

const metrics::Buckets& scheduling_buckets_seconds() {
  static const metrics::Buckets kBuckets = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                            0.25,  0.5,    1,     2.5,  5,     10,   30, 60};
  return kBuckets;
}

NimbusMetrics::NimbusMetrics(Nimbus& nimbus, metrics::Registry& registry)
    : nimbus_(nimbus),
      round_duration_(registry.histogram("rstorm_scheduling_duration_seconds",
                                         "Duration of the leader's scheduling rounds",
                                         scheduling_buckets_seconds())),
      rounds_(registry.counter("rstorm_scheduling_rounds_total",
                               "Scheduling rounds (leader) or sync passes (standby) completed")),
      handle_(registry, [&nimbus](metrics::Snapshot& out) {
        const bool leader = nimbus.is_leader();
        out.gauge("rstorm_nimbus_leader", "1 when this nimbus is the leader", {}, leader ? 1 : 0);
        if (leader) collect_cluster(nimbus, out);
      }) {
  nimbus.set_round_observer([this](std::chrono::nanoseconds d) { observe_round(d); });
}

void NimbusMetrics::observe_round(std::chrono::nanoseconds duration) {
  round_duration_.observe(std::chrono::duration<double>(duration).count());
  rounds_.increment();
}

}  // namespace rstorm::nimbus
