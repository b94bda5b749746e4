// NimbusMetrics: nimbus's Prometheus families, read at scrape time from the
// Nimbus it watches:
//   rstorm_nimbus_leader                         1 on the leader, 0 on a standby
//   rstorm_scheduling_duration_seconds           histogram of scheduling rounds (leader)
//   rstorm_scheduling_rounds_total               leader scheduling rounds completed
// and, on the leader only (so that sums over nimbuses count each thing once):
//   rstorm_topologies{status}                    topologies by status
//   rstorm_unschedulable_topologies              submitted topologies that do not fit
//   rstorm_topology_network_cost_pairs{topology,distance}
//                                                communicating executor pairs by distance
//                                                (same_worker, same_node, same_rack, cross_rack)
//   rstorm_node_{memory_capacity_bytes,memory_assigned_bytes,cpu_capacity_cores,
//                cpu_assigned_cores,slots,slots_used}{node,host,rack}
//
// Thread contract: construct/destroy on the owner's thread; the collector
// runs on the metrics server's threads and only calls Nimbus's thread-safe
// public methods. observe_round() may be called from any thread.
#pragma once

#include <chrono>

#include "common/metrics/metrics.hpp"
#include "nimbus/nimbus.hpp"

namespace rstorm::nimbus {

class NimbusMetrics {
 public:
  // `nimbus` and `registry` are borrowed and must outlive this object.
  // REQUIRES: nimbus not started yet (this sets its round observer), and
  // stopped before this object is destroyed.
  NimbusMetrics(Nimbus& nimbus, metrics::Registry& registry);

  // Records one scheduling round's duration.
  void observe_round(std::chrono::nanoseconds duration);

 private:
  Nimbus& nimbus_;
  metrics::Histogram& round_duration_;
  metrics::Counter& rounds_;
  metrics::CollectorHandle handle_;
};

// Scheduling-round buckets in seconds (1 ms .. 60 s).
const metrics::Buckets& scheduling_buckets_seconds();

}  // namespace rstorm::nimbus
