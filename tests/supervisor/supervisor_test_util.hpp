// Shared pieces of the supervisor tests: the word count library built by
// examples/, assignments written as nimbus writes them, and an in-process
// stand-in for nimbus's three RPCs that a supervisor makes (code download,
// topology info, heartbeat), serving real bytes and recording heartbeats.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "common/sha256.hpp"
#include "common/thrift/codec.hpp"
#include "rstorm_thrift/rstorm_types.h"
#include "supervisor/nimbus_link.hpp"
#include "worker/process/worker_spec.hpp"

namespace rstorm::testing {

inline std::string word_count_library() { return RSTORM_WORD_COUNT_LIB; }

inline std::string read_bytes(const std::string& path) {
  auto bytes = worker_process::read_whole_file(path);
  return bytes ? *bytes : std::string();
}

// One executor of the word count topology (sentences x1, split x2, count x2,
// report x1; tasks numbered from 1 in component-id order, as nimbus does).
struct Placement {
  std::string component;
  int task = 0;
  std::string node;
  int port = 0;
};

inline std::vector<Placement> word_count_executors() {
  // Components sorted by id: count(2), report(1), sentences(1), split(2).
  return {{"count", 1, "", 0},     {"count", 2, "", 0},     {"report", 3, "", 0},
          {"sentences", 4, "", 0}, {"split", 5, "", 0},     {"split", 6, "", 0}};
}

inline thrift::Assignment make_assignment(const std::string& topology_id,
                                          const std::vector<Placement>& placements,
                                          const std::string& blob_key, const std::string& sha,
                                          std::int64_t version) {
  thrift::Assignment a;
  a.topology_id = topology_id;
  for (const auto& p : placements) {
    thrift::ExecutorAssignment e;
    e.executor.task_start = p.task;
    e.executor.task_end = p.task;
    e.executor.component = p.component;
    e.slot.node_id = p.node;
    e.slot.port = p.port;
    a.executors.push_back(e);
    a.node_hosts[p.node] = "127.0.0.1";
  }
  a.code_blob_key = blob_key;
  a.code_sha256 = sha;
  a.version = version;
  return a;
}

class InProcessNimbusLink final : public supervisor::NimbusLink {
 public:
  void put_blob(const std::string& key, std::string bytes) {
    std::lock_guard lock(mutex_);
    blobs_[key] = std::move(bytes);
  }
  void put_topology(const std::string& id, const std::string& name, const Config& config) {
    thrift::TopologyInfo info;
    info.summary.id = id;
    info.summary.name = name;
    info.config = config_to_thrift(config);
    std::lock_guard lock(mutex_);
    topologies_[id] = std::move(info);
  }
  Result<std::string> download_blob(const std::string& key) override {
    std::lock_guard lock(mutex_);
    ++downloads_;
    auto it = blobs_.find(key);
    if (it == blobs_.end()) return Status(ErrorCode::kNotFound, "no blob '" + key + "'");
    return it->second;
  }
  // The worker tokens getTopologyInfo answers with, one per call, the last
  // one for every call after it (as nimbus gives supervisors in secure mode).
  void set_worker_tokens(const std::string& id, std::vector<thrift::WorkerToken> tokens) {
    std::lock_guard lock(mutex_);
    worker_tokens_[id] = std::move(tokens);
  }
  Result<thrift::TopologyInfo> topology_info(const std::string& id) override {
    std::lock_guard lock(mutex_);
    auto it = topologies_.find(id);
    if (it == topologies_.end()) return Status(ErrorCode::kNotFound, "no topology '" + id + "'");
    thrift::TopologyInfo info = it->second;
    if (auto tokens = worker_tokens_.find(id);
        tokens != worker_tokens_.end() && !tokens->second.empty()) {
      info.__set_worker_token(tokens->second.front());
      if (tokens->second.size() > 1) tokens->second.erase(tokens->second.begin());
    }
    return info;
  }
  Status supervisor_heartbeat(const thrift::SupervisorHeartbeat& heartbeat) override {
    std::lock_guard lock(mutex_);
    heartbeats_.push_back(heartbeat);
    return Status::ok();
  }
  std::vector<thrift::SupervisorHeartbeat> heartbeats() const {
    std::lock_guard lock(mutex_);
    return heartbeats_;
  }
  int downloads() const {
    std::lock_guard lock(mutex_);
    return downloads_;
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::string> blobs_;
  std::map<std::string, thrift::TopologyInfo> topologies_;
  std::map<std::string, std::vector<thrift::WorkerToken>> worker_tokens_;
  std::vector<thrift::SupervisorHeartbeat> heartbeats_;
  int downloads_ = 0;
};

}  // namespace rstorm::testing
