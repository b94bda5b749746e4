#include "rstorm/local_cluster.hpp"

#include <random>
#include <thread>

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "rstorm/worker/topology_runtime.hpp"

namespace rstorm {

LocalCluster::LocalCluster(LocalClusterOptions options)
    : logger_(std::move(options.logger)), seed_(options.seed) {
  if (!logger_) {
    logger_ = std::make_shared<spdlog::logger>("worker",
                                               std::make_shared<spdlog::sinks::stderr_sink_mt>());
  }
  if (seed_ == 0) {
    std::random_device rd;
    seed_ = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  }
}

LocalCluster::~LocalCluster() {
  std::map<std::string, std::unique_ptr<worker::TopologyRuntime>, std::less<>> running;
  {
    std::lock_guard lock(mutex_);
    running.swap(running_);
  }
  for (auto& [name, rt] : running) rt->stop();
}

api::Status LocalCluster::submit(const std::string& name, const Config& config,
                                 const Topology& topology) {
  std::lock_guard lock(mutex_);
  if (running_.count(name) > 0) {
    return api::Status::error("a topology named '" + name + "' is already running");
  }
  auto rt = worker::TopologyRuntime::create(name, config, topology, logger_,
                                            seed_ ^ std::hash<std::string>()(name));
  if (!rt.ok()) {
    return api::Status::error("cannot run topology '" + name + "': " + rt.status().message());
  }
  (*rt)->start();
  running_.emplace(name, std::move(rt).value());
  return api::Status::ok();
}

api::Status LocalCluster::kill(std::string_view name, std::chrono::milliseconds wait) {
  std::unique_ptr<worker::TopologyRuntime> rt;
  {
    std::lock_guard lock(mutex_);
    auto it = running_.find(name);
    if (it == running_.end()) {
      return api::Status::error("no topology named '" + std::string(name) + "' is running");
    }
    rt = std::move(it->second);
    running_.erase(it);
  }
  rt->deactivate();
  const auto deadline = std::chrono::steady_clock::now() + wait;
  while (rt->in_flight() > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  rt->stop();
  return api::Status::ok();
}

api::Status LocalCluster::activate(std::string_view name) {
  std::lock_guard lock(mutex_);
  auto it = running_.find(name);
  if (it == running_.end()) {
    return api::Status::error("no topology named '" + std::string(name) + "' is running");
  }
  it->second->activate();
  return api::Status::ok();
}

api::Status LocalCluster::deactivate(std::string_view name) {
  std::lock_guard lock(mutex_);
  auto it = running_.find(name);
  if (it == running_.end()) {
    return api::Status::error("no topology named '" + std::string(name) + "' is running");
  }
  it->second->deactivate();
  return api::Status::ok();
}

api::Result<TopologyStats> LocalCluster::stats(std::string_view name) const {
  std::lock_guard lock(mutex_);
  auto it = running_.find(name);
  if (it == running_.end()) {
    return api::Status::error("no topology named '" + std::string(name) + "' is running");
  }
  return it->second->stats();
}

std::vector<std::string> LocalCluster::topologies() const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> out;
  for (const auto& [name, rt] : running_) out.push_back(name);
  return out;
}

}  // namespace rstorm
