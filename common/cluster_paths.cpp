#include "common/cluster_paths.hpp"

namespace rstorm {

ClusterPaths::ClusterPaths(std::string root) : root_(root == "/" ? "" : std::move(root)) {}

std::string ClusterPaths::workerbeat(std::string_view topology_id, std::string_view supervisor_id,
                                     int port) const {
  return join_path(workerbeats(topology_id),
                   std::string(supervisor_id) + "-" + std::to_string(port));
}

std::vector<std::string> ClusterPaths::directories() const {
  std::vector<std::string> dirs;
  if (!root_.empty()) dirs.push_back(root_);
  for (auto d : {supervisors(), topologies(), assignments(), nimbus(), nimbus_leader(),
                 workerbeats(), errors(), backpressure(), code_replicas(), checkpoints()}) {
    dirs.push_back(std::move(d));
  }
  return dirs;
}

Status ClusterPaths::ensure_directories(CoordinationStore& store) const {
  for (const auto& dir : directories()) {
    if (Status s = store.ensure_path(dir); !s) return s;
  }
  return Status::ok();
}

}  // namespace rstorm
