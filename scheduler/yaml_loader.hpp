// Reads cluster descriptions and topology descriptions from YAML (conf/clusters/,
// examples/paper/). Every error names the file, the line and the field:
// "conf/clusters/x.yaml:7: field 'racks[0].nodes[1].memory_mb': expected a
// number, got 'lots'". Unknown fields are errors, so typos do not pass
// silently. Stateless functions, thread-safe. Callers: `rstorm schedule`,
// tests, benches.
#pragma once

#include <string>

#include "scheduler/cluster.hpp"
#include "scheduler/request.hpp"
#include "scheduler/result.hpp"

namespace rstorm::scheduler {

// Cluster description:
//   defaults: {memory_mb: 4096, cpu: 400, slots: 4, resources: {}}  # all optional
//   racks:
//     - name: r1
//       nodes:                      # a list of nodes ...
//         - {id: node-1, host: h1, memory_mb: 4096, cpu: 400, slots: [6700, 6701],
//            resources: {gpu.count: 1}}
//     - name: r2
//       nodes: 40                   # ... or a count: nodes r2-n1 .. r2-n40 with the defaults
// `slots` is a port list or a count N (ports 6700 .. 6700+N-1).
Result<Cluster> parse_cluster(const std::string& text, const std::string& origin);
Result<Cluster> load_cluster_file(const std::string& path);

// Topology description:
//   name: linear
//   config: {topology.workers: 12, topology.worker.max.heap.size.mb: 768,
//            topology.priority: 0, topology.acker.executors: 2,
//            topology.scheduler.strategy: resource-aware, ...}
//   components:
//     - {name: spout, type: spout, parallelism: 8, tasks: 8, onheap_mb: 128,
//        offheap_mb: 0, cpu: 40, resources: {gpu.count: 1}}
//     - {name: b1, parallelism: 4, cpu: 20, inputs: [spout]}   # type defaults to bolt
// Other topology.* config keys are accepted and ignored (they do not concern
// scheduling); any other key is an error.
Result<TopologyRequest> parse_topology(const std::string& text, const std::string& origin);
Result<TopologyRequest> load_topology_file(const std::string& path);

}  // namespace rstorm::scheduler
