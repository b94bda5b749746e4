// ClusterPaths: where rstorm keeps its state in the coordination store, under a
// configurable root (storm.zookeeper.root, default "/rstorm"):
//
//   <root>/supervisors/<supervisor-id>      ephemeral: host, rack, capacities, slots
//   <root>/topologies/<topology-id>         the submitted topology (structure, config, status)
//   <root>/assignments/<topology-id>        executor -> (supervisor, port)
//   <root>/nimbus/leader/n_<seq>            ephemeral sequential: leader election
//   <root>/workerbeats/<topology-id>/<supervisor-id>-<port>   worker heartbeats
//   <root>/errors/<topology-id>             recent component errors
//   <root>/backpressure/<topology-id>       throttled tasks per worker
//   <root>/worker-token-keys/<version>      nimbus's keys for worker tokens
//                                           (nimbus/worker_tokens.hpp)
//
// Values are Thrift-encoded (common/thrift/). Immutable; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/coordination_store.hpp"

namespace rstorm {

class ClusterPaths {
 public:
  static constexpr std::string_view kDefaultRoot = "/rstorm";

  // REQUIRES: `root` is a valid absolute path (validate_path).
  explicit ClusterPaths(std::string root = std::string(kDefaultRoot));

  const std::string& root() const { return root_; }

  std::string supervisors() const { return root_ + "/supervisors"; }
  std::string supervisor(std::string_view id) const { return join_path(supervisors(), id); }
  std::string topologies() const { return root_ + "/topologies"; }
  std::string topology(std::string_view id) const { return join_path(topologies(), id); }
  std::string assignments() const { return root_ + "/assignments"; }
  std::string assignment(std::string_view id) const { return join_path(assignments(), id); }
  std::string nimbus() const { return root_ + "/nimbus"; }
  std::string nimbus_leader() const { return root_ + "/nimbus/leader"; }
  std::string workerbeats() const { return root_ + "/workerbeats"; }
  std::string workerbeats(std::string_view topology_id) const {
    return join_path(workerbeats(), topology_id);
  }
  std::string workerbeat(std::string_view topology_id, std::string_view supervisor_id,
                         int port) const;
  std::string errors() const { return root_ + "/errors"; }
  std::string errors(std::string_view topology_id) const { return join_path(errors(), topology_id); }
  // Which nimbuses hold a topology's code and structure: one ephemeral child
  // per nimbus ("host:port") under code_replicas(topology id).
  std::string code_replicas() const { return root_ + "/blobstore"; }
  std::string code_replicas(std::string_view topology_id) const {
    return join_path(code_replicas(), topology_id);
  }
  // What nimbus records of a topology's checkpoints (thrift::CheckpointState).
  std::string checkpoints() const { return root_ + "/checkpoints"; }
  std::string checkpoints(std::string_view topology_id) const {
    return join_path(checkpoints(), topology_id);
  }
  std::string backpressure() const { return root_ + "/backpressure"; }
  std::string backpressure(std::string_view topology_id) const {
    return join_path(backpressure(), topology_id);
  }

  // Every fixed directory above, parents first.
  std::vector<std::string> directories() const;
  // Creates every fixed directory (persistent, empty) that is missing.
  Status ensure_directories(CoordinationStore& store) const;

 private:
  std::string root_;  // no trailing slash ("" stands for "/")
};

}  // namespace rstorm
