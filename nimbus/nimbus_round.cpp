// Nimbus's monitor thread: scheduling rounds on the leader, blob sync on a standby.
#include <algorithm>

#include "common/thrift/codec.hpp"
#include "nimbus/nimbus.hpp"
#include "nimbus/nimbus_client.hpp"
#include "nimbus/topology_structure.hpp"
#include "scheduler/render.hpp"
#include "scheduler/scheduler.hpp"

namespace rstorm::nimbus {
namespace {

using ExecutorKey = std::tuple<std::string, int, int>;  // component, first task, last task

ExecutorKey key_of(const thrift::ExecutorInfo& e) {
  return {e.component, e.task_start, e.task_end};
}

// UNSCHEDULABLE for `reason`, remembering whether the user had it active:
// a deactivated topology's spouts stay paused in the workers that run on,
// and it is INACTIVE again once placed.
void mark_unschedulable(thrift::TopologyRecord& record, const std::string& reason) {
  record.resume_status = user_status(record);
  record.status = thrift::TopologyStatus::UNSCHEDULABLE;
  record.status_reason = reason;
}

}  // namespace

void Nimbus::monitor_loop(std::stop_token stop) {
  while (!stop.stop_requested()) {
    {
      std::unique_lock lock(mutex_);
      // A kill or rebalance whose wait ends before the next period is
      // applied when it ends, not up to a monitor period later.
      auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(options_.monitor_period);
      const std::int64_t t = now();
      auto sooner = [&](std::int64_t deadline_ms) {
        wait = std::min(wait, std::chrono::milliseconds(std::max<std::int64_t>(0, deadline_ms - t) + 1));
      };
      for (const auto& [id, deadline] : kill_deadlines_) sooner(deadline);
      for (const auto& [id, deadline] : rebalance_deadlines_) sooner(deadline);
      wake_.wait_for(lock, stop, wait, [this] { return dirty_; });
      if (stop.stop_requested()) return;
      dirty_ = false;
    }
    try {
      if (is_leader()) {
        const auto begin = std::chrono::steady_clock::now();
        leader_round();
        if (round_observer_) round_observer_(std::chrono::steady_clock::now() - begin);
      } else {
        leading_since_ms_ = 0;  // a later leadership starts its grace afresh
        standby_sync();
      }
    } catch (const std::exception& e) {
      // One bad topology or a store hiccup must not kill nimbus: log and retry next round.
      logger_.error("monitor round failed: {}", e.what());
    }
    std::lock_guard lock(mutex_);
    ++rounds_;
  }
}

void Nimbus::arm_watches() {
  bool arm_supervisors = false, arm_topologies = false;
  {
    std::lock_guard lock(mutex_);
    arm_supervisors = !supervisors_watched_;
    arm_topologies = !topologies_watched_;
    supervisors_watched_ = topologies_watched_ = true;
  }
  if (arm_supervisors) {
    auto s = store_.children(paths_.supervisors(), watches_.guard([this](const WatchEvent&) {
      {
        std::lock_guard lock(mutex_);
        supervisors_watched_ = false;
      }
      trigger();
    }));
    if (!s) {
      std::lock_guard lock(mutex_);
      supervisors_watched_ = false;
    }
  }
  if (arm_topologies) {
    auto s = store_.children(paths_.topologies(), watches_.guard([this](const WatchEvent&) {
      {
        std::lock_guard lock(mutex_);
        topologies_watched_ = false;
      }
      trigger();
    }));
    if (!s) {
      std::lock_guard lock(mutex_);
      topologies_watched_ = false;
    }
  }
}

// Registered supervisors whose heartbeat (or first sighting, for one that has
// not sent any yet) is younger than nimbus.supervisor.timeout.secs; and, for
// that long after it was last heard from, one whose registration is gone
// (leader_round leaves it only the slots in use): its executors stay, as
// Storm's do until that timeout. A supervisor killed on its own leaves its
// workers running, and they stop only a little before the timeout (a
// restarted supervisor takes them over meanwhile): moved at the end of its
// ZooKeeper session instead, the executors ran twice until then.
std::map<std::string, thrift::SupervisorInfo> Nimbus::live_supervisors(std::int64_t now_ms) {
  std::map<std::string, thrift::SupervisorInfo> out;
  auto ids = store_.children(paths_.supervisors());
  if (!ids) return out;
  std::lock_guard lock(mutex_);
  auto last_heard = [&](const std::string& id) {
    return std::max(supervisor_seen_[id], supervisor_beats_.count(id) ? supervisor_beats_[id] : 0);
  };
  for (const std::string& id : *ids) {
    auto node = store_.get(paths_.supervisor(id));
    if (!node) continue;
    auto info = decode_thrift<thrift::SupervisorInfo>(node->data, "SupervisorInfo");
    if (!info) {
      logger_.warn("ignoring supervisor {}: {}", id, info.status().message());
      continue;
    }
    if (unregistered_.erase(id) > 0) logger_.info("supervisor {} registered again", id);
    supervisor_seen_.try_emplace(id, now_ms);
    supervisor_info_[id] = *info;
    const std::int64_t last = last_heard(id);
    if (now_ms - last > options_.supervisor_timeout.count()) {
      if (reported_dead_.insert(id).second) {
        logger_.warn("supervisor {} missed heartbeats for {} ms: treating it as dead", id,
                     now_ms - last);
      }
      continue;
    }
    reported_dead_.erase(id);
    out.emplace(id, std::move(*info));
  }
  for (auto it = supervisor_seen_.begin(); it != supervisor_seen_.end();) {
    const std::string& id = it->first;
    if (std::binary_search(ids->begin(), ids->end(), id)) {
      ++it;
      continue;
    }
    const std::int64_t last = last_heard(id);
    auto info = supervisor_info_.find(id);
    if (now_ms - last <= options_.supervisor_timeout.count() && info != supervisor_info_.end()) {
      if (unregistered_.insert(id).second) {
        logger_.warn("supervisor {}'s registration is gone (its ZooKeeper session ended): its "
                     "executors stay until nimbus.supervisor.timeout.secs ({} s) after it was "
                     "last heard from, unless it registers again",
                     id, options_.supervisor_timeout.count() / 1000);
      }
      out.emplace(id, info->second);  // leader_round keeps only its used slots
      ++it;
      continue;
    }
    // Gone for good: forgotten, so that a return starts afresh.
    if (unregistered_.erase(id) > 0) {
      logger_.warn("supervisor {} was not heard from for {} ms: treating it as dead", id,
                   now_ms - last);
    }
    supervisor_beats_.erase(id);
    heartbeating_supervisors_.erase(id);
    supervisor_info_.erase(id);
    it = supervisor_seen_.erase(it);
  }
  return out;
}

// A worker is dead when its supervisor reports workers but has not reported
// this one for nimbus.task.timeout.secs (or never, nimbus.task.launch.secs
// after the slot was assigned).
bool Nimbus::worker_dead(const SlotKey& slot, std::int64_t now_ms) {
  std::lock_guard lock(mutex_);
  if (!heartbeating_supervisors_.count(slot.node)) return false;
  // Its supervisor's registration is gone: no word of its workers comes, and
  // they are not dead for that (live_supervisors keeps them until timeout).
  if (unregistered_.count(slot.node)) return false;
  const std::int64_t since = slot_since_.try_emplace(slot, now_ms).first->second;
  auto beat = worker_beats_.find(slot);
  if (beat != worker_beats_.end() && beat->second >= since) {
    return now_ms - beat->second > options_.task_timeout.count();
  }
  return now_ms - since > options_.task_launch.count();
}

void Nimbus::publish_replicas(const std::vector<thrift::TopologyRecord>& records) {
  const std::string me = self_.host + ":" + std::to_string(self_.port);
  for (const auto& r : records) {
    if (r.status == thrift::TopologyStatus::KILLED) continue;
    if (!blobs_.info(r.code_blob_key) || !blobs_.info(r.structure_blob_key)) continue;
    const std::string dir = paths_.code_replicas(r.id);
    const std::string node = dir + "/" + me;
    auto there = store_.exists(node);
    if (there && *there) continue;
    if (Status s = store_.ensure_path(dir); !s) {
      logger_.warn("cannot record that this nimbus holds the code of {}: {}", r.id, s.message());
      continue;
    }
    auto created = store_.create(node, "", CreateMode::kEphemeral);
    if (!created && created.status().code() != ErrorCode::kAlreadyExists) {
      logger_.warn("cannot record that this nimbus holds the code of {}: {}", r.id,
                   created.status().message());
    }
  }
}

bool Nimbus::replicated_enough(const thrift::TopologyRecord& record, std::int64_t now_ms) {
  if (options_.min_replication <= 1) return true;
  // The watch wakes this leader as soon as a standby registers its copy.
  auto holders = store_.children(paths_.code_replicas(record.id),
                                 watches_.guard([this](const WatchEvent&) { trigger(); }));
  const int have = holders ? static_cast<int>(holders->size()) : 0;
  if (have >= options_.min_replication) {
    if (replication_logged_.erase(record.id)) {
      logger_.info("code of {} is on {} nimbuses: scheduling it", record.id, have);
    }
    return true;
  }
  const std::int64_t waited = now_ms - record.launch_time_ms;
  const std::int64_t limit = options_.max_replication_wait.count();
  if (limit >= 0 && waited >= limit) {
    if (replication_logged_.insert(record.id + "/gave-up").second) {
      logger_.warn(
          "code of {} is on {} of {} nimbuses after {} ms "
          "(topology.max.replication.wait.time.sec): scheduling it anyway; a failover before "
          "the others copy it would lose it",
          record.id, have, options_.min_replication, waited);
    }
    return true;
  }
  if (replication_logged_.insert(record.id).second) {
    logger_.info("waiting until {} nimbuses hold the code of {} (topology.min.replication.count); "
                 "{} so far",
                 options_.min_replication, record.id, have);
  }
  return false;
}

void Nimbus::finish_kill(const thrift::TopologyRecord& record) {
  (void)store_.remove_recursive(paths_.code_replicas(record.id));
  (void)store_.remove(paths_.assignment(record.id));
  (void)store_.remove_recursive(paths_.workerbeats(record.id));
  (void)store_.remove_recursive(paths_.errors(record.id));
  (void)store_.remove(paths_.topology(record.id));
  (void)blobs_.remove(record.code_blob_key);
  (void)blobs_.remove(record.structure_blob_key);
  (void)store_.remove(paths_.checkpoints(record.id));
  remove_checkpoint_parts(record.id, nullptr);
  std::lock_guard lock(mutex_);
  loaded_.erase(record.id);
  kill_deadlines_.erase(record.id);
  rebalance_deadlines_.erase(record.id);
  placements_.erase(record.id);
  last_moved_.erase(record.id);
  logger_.info("killed topology {}: assignment and blobs removed", record.id);
}

Status Nimbus::apply_rebalance(thrift::TopologyRecord record, std::int32_t version) {
  const thrift::RebalanceOptions options = record.rebalance;
  auto loaded = load(record);
  if (!loaded) return loaded.status();
  thrift::TopologyInfo stored;
  stored.summary.id = record.id;
  stored.summary.name = record.name;
  stored.structure = loaded->structure;
  stored.config = loaded->config;
  stored.__isset.structure = stored.__isset.config = true;
  // The workers' secret stays: workers started after the rebalance prove
  // their membership with it to those that keep running.
  if (!loaded->secret.empty()) stored.__set_secret(loaded->secret);
  if (options.__isset.num_executors) {
    for (auto& c : stored.structure.components) {
      auto it = options.num_executors.find(c.id);
      if (it == options.num_executors.end()) continue;
      if (c.num_tasks <= 0) c.num_tasks = c.parallelism;  // tasks never change
      c.parallelism = it->second;
    }
  }
  if (options.__isset.resource_overrides) {
    if (Status s = apply_resource_overrides(stored.structure, options.resource_overrides); !s) {
      return s;
    }
  }
  if (options.__isset.num_workers) {
    stored.config["topology.workers"].value_yaml = std::to_string(options.num_workers);
    stored.config["topology.workers"].origin = "rebalance";
    record.num_workers = options.num_workers;
  }
  auto put = blobs_.put(record.structure_blob_key, encode_thrift(stored));
  if (!put) return put.status();
  record.structure_sha256 = put->sha256;  // standbys copy the new version
  for (const auto& c : stored.structure.components)
    record.component_executors[c.id] = c.parallelism;
  record.status = user_status(record);
  record.status_reason.clear();
  record.__isset.rebalance = false;
  record.rebalance = {};
  record.rebalance_deadline_ms = 0;
  {
    std::lock_guard lock(mutex_);
    loaded_.erase(record.id);
    // A new worker count places every executor afresh; otherwise executors
    // the rebalance leaves as they were stay where they run (their workers
    // keep running) and only the resized components' executors are placed.
    if (options.__isset.num_workers) fresh_placement_.insert(record.id);
    // Executors whose resources changed are placed afresh: where they ran
    // may no longer hold them, and a place that does is what was asked for.
    if (options.__isset.resource_overrides) {
      auto& replaced = replaced_components_[record.id];
      for (const auto& [component, resources] : options.resource_overrides) {
        replaced.insert(component);
      }
    }
  }
  return write_record(record, version);
}

void Nimbus::leader_round() {
  arm_watches();
  const std::int64_t t = now();
  if (leading_since_ms_ == 0) {
    leading_since_ms_ = t;
    seen_while_leading_.clear();
    waiting_for_.clear();
  }
  auto supervisors = live_supervisors(t);
  for (const auto& [id, info] : supervisors) seen_while_leading_.insert(id);
  // The round writes a record only over the version it read here: a kill,
  // deactivate or rebalance that lands while it runs is never overwritten.
  std::map<std::string, std::int32_t> versions;
  auto records = all_records(&versions);
  if (!records) {
    logger_.warn("cannot read topologies: {}", records.status().message());
    return;
  }
  publish_replicas(*records);
  scheduler::Cluster cluster;
  for (const auto& [id, info] : supervisors) {
    scheduler::NodeSpec node;
    node.id = scheduler::NodeId(id);
    node.host = info.host;
    node.rack = scheduler::RackId(info.rack.empty() ? "default-rack" : info.rack);
    node.memory_mb = info.memory_capacity_mb;
    node.cpu = info.cpu_capacity;
    node.ports.assign(info.slots.begin(), info.slots.end());
    std::sort(node.ports.begin(), node.ports.end());
    node.ports.erase(std::unique(node.ports.begin(), node.ports.end()), node.ports.end());
    node.generic =
        scheduler::GenericResources(info.generic_resources.begin(), info.generic_resources.end());
    cluster.nodes.push_back(std::move(node));
  }
  auto drop_port = [&](const std::string& node_id, int port) {
    for (auto& n : cluster.nodes) {
      if (n.id.value() == node_id) std::erase(n.ports, port);
    }
  };
  std::vector<scheduler::TopologyRequest> requests;
  std::vector<thrift::TopologyRecord> scheduled_records;
  std::vector<std::optional<thrift::Assignment>> existing;
  std::set<SlotKey> assigned_slots;
  // Topologies whose workers run on but that this round does not place: one
  // being killed (until its wait ends) and one waiting to be rebalanced.
  std::vector<const thrift::TopologyRecord*> holding;
  for (thrift::TopologyRecord& record : *records) {
    if (record.status == thrift::TopologyStatus::KILLED) {
      holding.push_back(&record);
      std::int64_t deadline;
      {
        std::lock_guard lock(mutex_);
        // As the record says, whichever nimbus it was asked of (older
        // records keep only the wait: from this round on).
        deadline = record.kill_deadline_ms > 0
                       ? (kill_deadlines_[record.id] = record.kill_deadline_ms)
                       : kill_deadlines_.try_emplace(record.id, t + record.kill_wait_secs * 1000LL)
                             .first->second;
      }
      if (t >= deadline) finish_kill(record);
      continue;  // its slots stay taken until then (below)
    }
    bool rebalanced = false;
    if (record.status == thrift::TopologyStatus::REBALANCING) {
      rebalanced = true;
      // As the record says, whichever nimbus it was asked of (a failover, a
      // restart since); one that keeps none is finished now.
      const std::int64_t deadline = record.__isset.rebalance ? record.rebalance_deadline_ms : t;
      {
        std::lock_guard lock(mutex_);
        if (t < deadline) {
          rebalance_deadlines_[record.id] = deadline;
        } else {
          rebalance_deadlines_.erase(record.id);
        }
      }
      if (t < deadline) {
        holding.push_back(&record);
        continue;
      }
      if (Status s = apply_rebalance(record, versions[record.id]); !s) {
        logger_.error("rebalance of {} failed: {}", record.id, s.message());
      }
      auto reread = find_record(record.id);
      if (!reread) continue;
      record = reread->first;
      versions[record.id] = reread->second;
      if (record.status == thrift::TopologyStatus::KILLED) {
        holding.push_back(&record);  // killed meanwhile: the next round finishes it
        trigger();
        continue;
      }
    }
    auto loaded = load(record);
    if (!loaded) {
      if (record.status != thrift::TopologyStatus::UNSCHEDULABLE ||
          record.status_reason != loaded.status().message()) {
        mark_unschedulable(record, loaded.status().message());
        write_round_record(record, versions[record.id]);
      }
      continue;
    }
    std::optional<thrift::Assignment> assignment;
    if (auto node = store_.get(paths_.assignment(record.id))) {
      auto decoded = decode_thrift<thrift::Assignment>(node->data, "Assignment");
      if (decoded) assignment = std::move(*decoded);
    }
    if (!assignment && !replicated_enough(record, t)) {
      // Said where the user looks (describe, list, submit --wait), not only
      // in this log; cleared once it is placed.
      const std::int64_t limit = options_.max_replication_wait.count();
      const std::string why =
          "waiting until " + std::to_string(options_.min_replication) +
          " nimbuses hold its code (topology.min.replication.count), " +
          (limit < 0 ? std::string("with no time limit")
                     : "then placed anyway at most " + std::to_string(limit / 1000) +
                           " s after submit") +
          " (topology.max.replication.wait.time.sec)";
      if (record.status_reason != why) {
        record.status_reason = why;
        write_round_record(record, versions[record.id]);
      }
      continue;
    }
    // A placed topology waits for its supervisors rather than being moved off
    // them, its slots on the nodes there are staying taken: while no
    // supervisor is registered at all (a whole cluster starting, nimbus
    // first), and while a leader that has just taken over (a restart, a
    // failover) has not seen one it runs on yet, for up to
    // nimbus.supervisor.timeout.secs: a supervisor that registers a moment
    // after the others would otherwise find its workers' executors moved
    // away, and the topology placed twice. A supervisor this leader saw leave
    // is gone: no wait. A topology placed afresh in part (rebalanced, new
    // components) waits only for the first supervisor.
    if (assignment) {
      std::set<std::string> absent;
      for (const auto& e : assignment->executors) {
        if (!supervisors.count(e.slot.node_id) && !seen_while_leading_.count(e.slot.node_id)) {
          absent.insert(e.slot.node_id);
        }
      }
      bool changed = rebalanced;
      {
        std::lock_guard lock(mutex_);
        changed = changed || fresh_placement_.count(record.id) > 0 ||
                  replaced_components_.count(record.id) > 0;
      }
      const bool late = !changed && !absent.empty() &&
                        t - leading_since_ms_ < options_.supervisor_timeout.count();
      if (supervisors.empty() || late) {
        if (waiting_for_.insert(record.id).second) {
          std::string names;
          for (const auto& n : absent) names += (names.empty() ? "" : ", ") + n;
          if (supervisors.empty()) {
            logger_.info("no supervisor is registered: {} keeps its assignment until one is",
                         record.id);
          } else {
            logger_.info(
                "{} runs on supervisors that have not registered with this leader yet ({}): "
                "waiting up to {} s for them before moving its executors",
                record.id, names, options_.supervisor_timeout.count() / 1000);
          }
        }
        for (const auto& e : assignment->executors) {
          assigned_slots.insert(SlotKey{record.id, e.slot.node_id, e.slot.port});
        }
        holding.push_back(&record);
        continue;
      }
    }
    waiting_for_.erase(record.id);
    scheduler::TopologyRequest request = loaded->request;
    request.current.assign(request.executors.size(), std::nullopt);
    bool fresh = false;
    std::set<std::string> replaced;
    {
      std::lock_guard lock(mutex_);
      fresh = fresh_placement_.erase(record.id) > 0;
      if (auto it = replaced_components_.find(record.id); it != replaced_components_.end()) {
        replaced = std::move(it->second);
        replaced_components_.erase(it);
      }
    }
    if (assignment && fresh) {
      for (const auto& e : assignment->executors) {
        assigned_slots.insert(SlotKey{record.id, e.slot.node_id, e.slot.port});
      }
    } else if (assignment) {
      std::map<ExecutorKey, thrift::WorkerSlot> where;
      for (const auto& e : assignment->executors) where[key_of(e.executor)] = e.slot;
      for (std::size_t i = 0; i < request.executors.size(); ++i) {
        const auto& e = request.executors[i];
        auto it = where.find({e.component, e.first_task, e.last_task});
        if (it == where.end()) continue;
        SlotKey slot{record.id, it->second.node_id, it->second.port};
        assigned_slots.insert(slot);
        if (replaced.count(e.component)) continue;
        if (worker_dead(slot, t)) {
          logger_.warn("worker {}:{} of {} stopped heartbeating: moving its executors", slot.node,
                       slot.port, record.id);
          drop_port(slot.node, slot.port);
          continue;
        }
        request.current[i] =
            scheduler::WorkerSlot{scheduler::NodeId(it->second.node_id), it->second.port};
      }
      // The ackers (topology.acker.executors) stay where they run too: they
      // follow the executors in `current`, acker i as task -1-i.
      const int ackers = request.acker_executors.value_or(0);
      if (ackers > 0) request.current.resize(request.executors.size() + ackers);
      for (int a = 0; a < ackers; ++a) {
        auto it = where.find({scheduler::kAckerComponent, -1 - a, -1 - a});
        if (it == where.end()) continue;
        SlotKey slot{record.id, it->second.node_id, it->second.port};
        assigned_slots.insert(slot);
        if (worker_dead(slot, t)) {
          const bool gone = std::none_of(
              cluster.nodes.begin(), cluster.nodes.end(), [&](const scheduler::NodeSpec& n) {
                return n.id.value() == slot.node &&
                       std::find(n.ports.begin(), n.ports.end(), slot.port) != n.ports.end();
              });
          if (!gone) {
            logger_.warn("worker {}:{} of {} stopped heartbeating: moving its ackers", slot.node,
                         slot.port, record.id);
            drop_port(slot.node, slot.port);
          }
          continue;
        }
        request.current[request.executors.size() + a] =
            scheduler::WorkerSlot{scheduler::NodeId(it->second.node_id), it->second.port};
      }
    }
    requests.push_back(std::move(request));
    scheduled_records.push_back(record);
    existing.push_back(std::move(assignment));
  }
  // Their slots, and the memory and CPU their workers use, stay taken until
  // their assignment goes or changes: a topology placed meanwhile must not
  // get a port a worker still listens on, nor memory it still holds.
  cluster.used = held_slots(holding, cluster);
  // A supervisor whose registration is gone (live_supervisors) keeps the
  // slots its workers use; nothing new is placed on it.
  {
    std::set<std::string> unregistered;
    {
      std::lock_guard lock(mutex_);
      unregistered = unregistered_;
    }
    for (scheduler::NodeSpec& n : cluster.nodes) {
      if (!unregistered.count(n.id.value())) continue;
      std::erase_if(n.ports, [&](int port) {
        return std::none_of(assigned_slots.begin(), assigned_slots.end(), [&](const SlotKey& k) {
          return k.node == n.id.value() && k.port == port;
        });
      });
    }
  }
  auto result = scheduler::schedule(cluster, requests);
  if (!result) {
    logger_.error("scheduling failed: {}", result.error().message);
    return;
  }
  for (std::size_t i = 0; i < requests.size(); ++i) {
    write_outcome(scheduled_records[i], versions[scheduled_records[i].id], requests[i],
                  result.value().topologies[i], existing[i], supervisors);
  }
  std::lock_guard lock(mutex_);
  usage_ = result.value().nodes;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const scheduler::TopologyPlacement& placed = result.value().topologies[i];
    auto old = placements_.find(scheduled_records[i].id);
    // Nothing moved: the placement that put it there still tells its story
    // (its CPU overcommit warnings, decisions and quality), not this round's,
    // which only kept every executor where it was.
    if (old != placements_.end() && placed.scheduled && placed.moved_executors == 0 &&
        old->second.executor_slots == placed.executor_slots &&
        old->second.acker_slots == placed.acker_slots) {
      continue;
    }
    placements_[scheduled_records[i].id] = placed;
  }
  // Forget launch times of slots no longer assigned.
  for (auto it = slot_since_.begin(); it != slot_since_.end();) {
    it = assigned_slots.count(it->first) ? std::next(it) : slot_since_.erase(it);
  }
  for (auto it = worker_started_.begin(); it != worker_started_.end();) {
    it = assigned_slots.count(it->first) ? std::next(it) : worker_started_.erase(it);
  }
}

std::vector<scheduler::SlotUsage> Nimbus::held_slots(
    const std::vector<const thrift::TopologyRecord*>& holding, const scheduler::Cluster& cluster) {
  std::vector<scheduler::SlotUsage> out;
  std::set<std::pair<std::string, int>> taken;
  for (const thrift::TopologyRecord* record : holding) {
    auto node = store_.get(paths_.assignment(record->id));
    if (!node) continue;
    auto a = decode_thrift<thrift::Assignment>(node->data, "Assignment");
    if (!a) continue;
    for (auto& [key, usage] : worker_usage(*record, *a)) {
      // Only a slot the cluster still offers: a node gone (or its port) holds nothing.
      const bool offered =
          std::any_of(cluster.nodes.begin(), cluster.nodes.end(), [&](const auto& n) {
            return n.id.value() == key.first &&
                   std::find(n.ports.begin(), n.ports.end(), key.second) != n.ports.end();
          });
      if (offered && taken.insert(key).second) out.push_back(std::move(usage));
    }
  }
  return out;
}

std::map<std::pair<std::string, int>, scheduler::SlotUsage> Nimbus::worker_usage(
    const thrift::TopologyRecord& record, const thrift::Assignment& assignment) {
  std::map<std::pair<std::string, int>, scheduler::SlotUsage> slots;
  for (const auto& e : assignment.executors) {
    scheduler::SlotUsage& u = slots[{e.slot.node_id, e.slot.port}];
    u.slot = scheduler::WorkerSlot{scheduler::NodeId(e.slot.node_id), e.slot.port};
    u.topology = scheduler::TopologyId(record.id);
    u.memory_mb += e.resources.onheap_mb + e.resources.offheap_mb;
    u.cpu += e.resources.cpu_pcore_percent;
    for (const auto& [name, amount] : e.resources.generic) u.generic[name] += amount;
  }
  auto loaded = load(record);
  if (!loaded) {
    logger_.warn("topology {}: its workers' ackers are not counted: {}", record.id,
                 loaded.status().message());
    return slots;
  }
  if (!loaded->request.acker_executors.has_value()) {
    for (auto& [key, u] : slots) {
      u.memory_mb += loaded->request.acker_onheap_mb;
      u.cpu += loaded->request.acker_cpu;
    }
  }
  return slots;
}

void Nimbus::write_outcome(const thrift::TopologyRecord& record, std::int32_t version,
                           const scheduler::TopologyRequest& request,
                           const scheduler::TopologyPlacement& placement,
                           const std::optional<thrift::Assignment>& existing,
                           const std::map<std::string, thrift::SupervisorInfo>& supervisors) {
  thrift::TopologyRecord updated = record;
  if (!placement.scheduled) {
    mark_unschedulable(updated, placement.reason);
    if (updated != record) {
      logger_.warn("topology {} is unschedulable: {}", record.id, placement.reason);
      write_round_record(updated, version);
    }
    return;
  }
  thrift::Assignment assignment;
  assignment.topology_id = record.id;
  for (std::size_t i = 0; i < request.executors.size() && i < placement.executor_slots.size();
       ++i) {
    const auto& e = request.executors[i];
    thrift::ExecutorAssignment ea;
    ea.executor.task_start = e.first_task;
    ea.executor.task_end = e.last_task;
    ea.executor.component = e.component;
    ea.slot.node_id = placement.executor_slots[i].node.value();
    ea.slot.port = placement.executor_slots[i].port;
    ea.resources.onheap_mb = e.onheap_mb;
    ea.resources.offheap_mb = e.offheap_mb;
    ea.resources.cpu_pcore_percent = e.cpu;
    ea.resources.generic = std::map<std::string, double>(e.generic.begin(), e.generic.end());
    auto host = supervisors.find(ea.slot.node_id);
    assignment.node_hosts[ea.slot.node_id] =
        host != supervisors.end() ? host->second.host : ea.slot.node_id;
    assignment.executors.push_back(std::move(ea));
  }
  // topology.acker.executors set: the ackers run where the scheduler placed
  // (and charged) them, as "__acker" executors of tasks -1, -2, ... The
  // workers read them from here (with one acker per worker, none are listed).
  for (std::size_t i = 0; i < placement.acker_slots.size(); ++i) {
    thrift::ExecutorAssignment ea;
    ea.executor.task_start = ea.executor.task_end = -1 - static_cast<int>(i);
    ea.executor.component = scheduler::kAckerComponent;
    ea.slot.node_id = placement.acker_slots[i].node.value();
    ea.slot.port = placement.acker_slots[i].port;
    ea.resources.onheap_mb = request.acker_onheap_mb;
    ea.resources.cpu_pcore_percent = request.acker_cpu;
    auto host = supervisors.find(ea.slot.node_id);
    assignment.node_hosts[ea.slot.node_id] =
        host != supervisors.end() ? host->second.host : ea.slot.node_id;
    assignment.executors.push_back(std::move(ea));
  }
  assignment.code_blob_key = record.code_blob_key;
  assignment.code_sha256 = record.code_sha256;
  assignment.warnings = placement.warnings;
  // The warnings are the placement's story, not a change: an assignment
  // kept as it was keeps those it was written with.
  const bool same = existing && existing->executors == assignment.executors &&
                    existing->node_hosts == assignment.node_hosts &&
                    existing->code_sha256 == assignment.code_sha256;
  if (!same) {
    assignment.version = existing ? existing->version + 1 : 1;
    assignment.assigned_time_ms = now();
    const std::string bytes = encode_thrift(assignment);
    const std::string path = paths_.assignment(record.id);
    Status s = existing ? store_.set(path, bytes).status() : store_.create(path, bytes).status();
    if (!s) {
      logger_.error("cannot write assignment of {}: {}", record.id, s.message());
      return;
    }
    // The placement's quality with it: what the greedy alone would cost, what
    // the search reached, and the optimum when the exact solver proved one.
    logger_.info("assignment of {} version {}: {} executors{}, {} moved; network cost {}; {}",
                 record.id, assignment.version, request.executors.size(),
                 placement.acker_slots.empty()
                     ? std::string()
                     : " and " + std::to_string(placement.acker_slots.size()) + " ackers",
                 placement.moved_executors, placement.network.weighted(),
                 scheduler::quality_text(placement.quality));
    std::lock_guard lock(mutex_);
    last_moved_[record.id] = placement.moved_executors;
  }
  if (updated.status == thrift::TopologyStatus::UNSCHEDULABLE) {
    updated.status = user_status(updated);
    updated.status_reason.clear();
  }
  updated.status_reason = updated.status == thrift::TopologyStatus::ACTIVE ||
                                  updated.status == thrift::TopologyStatus::INACTIVE
                              ? std::string()
                              : updated.status_reason;
  if (updated != record) write_round_record(updated, version);
}

void Nimbus::write_round_record(const thrift::TopologyRecord& record, std::int32_t version) {
  Status s = write_record(record, version);
  if (s.is_ok()) return;
  if (s.code() == ErrorCode::kVersionConflict || s.code() == ErrorCode::kNotFound) {
    // A command changed it while this round ran (its wake is already
    // pending): the next round starts from what it is now.
    trigger();
    return;
  }
  logger_.error("cannot write the record of topology {}: {}", record.id, s.message());
}

// A standby copies the code and structure blobs of every topology from the
// leader (through the leader's Thrift download API) and drops blobs of
// topologies that are gone, so that it can serve code after a failover.
void Nimbus::standby_sync() {
  arm_watches();  // a new topology wakes the standby to copy its code at once
  auto records = all_records();
  if (!records) return;
  std::set<std::string> wanted;
  std::vector<std::pair<std::string, std::string>> missing;  // key, expected sha ("" unknown)
  for (const auto& r : *records) {
    wanted.insert(r.code_blob_key);
    wanted.insert(r.structure_blob_key);
    if (r.status == thrift::TopologyStatus::KILLED) continue;
    if (!blobs_.info(r.code_blob_key)) missing.emplace_back(r.code_blob_key, r.code_sha256);
    // The structure is rewritten in place by a rebalance: copied again when
    // the copy here is not the version the record names.
    auto structure = blobs_.info(r.structure_blob_key);
    if (!structure || (!r.structure_sha256.empty() && structure->sha256 != r.structure_sha256)) {
      missing.emplace_back(r.structure_blob_key, r.structure_sha256);
    }
    // The parts of the checkpoints kept, so that a restore after a
    // failover finds them here.
    for (auto& key : wanted_checkpoint_parts(r.id)) {
      if (!blobs_.info(key)) missing.emplace_back(key, "");
      wanted.insert(std::move(key));
    }
  }
  {
    std::lock_guard lock(mutex_);
    for (auto it = loaded_.begin(); it != loaded_.end();) {
      it = wanted.count(topology_blob_key(it->first)) ? std::next(it) : loaded_.erase(it);
    }
  }
  if (auto keys = blobs_.list()) {
    for (const auto& key : *keys) {
      if (!wanted.count(key)) (void)blobs_.remove(key);
    }
  }
  if (missing.empty()) {
    publish_replicas(*records);
    return;
  }
  auto at = leader();
  if (!at || (at->host == self_.host && at->port == self_.port)) return;
  NimbusClient::Options options;
  options.seeds = {{at->host, at->port}};
  if (options_.client_tls) {
    options.seeds = {{at->host, at->tls_port}};
    options.tls = options_.client_tls;
  }
  options.follow_leader = false;
  options.timeout = std::chrono::milliseconds(10000);
  auto client = NimbusClient::connect(options);
  if (!client) return;
  bool progress = false;
  for (const auto& [key, sha] : missing) {
    auto bytes = (*client)->download_blob(key);
    if (!bytes) {
      logger_.warn("cannot copy blob {} from the leader: {}", key, bytes.status().message());
      continue;
    }
    auto put = blobs_.put(key, *bytes);
    if (put && !sha.empty() && put->sha256 != sha) {
      // A structure rewritten again since the records were read is newer
      // than the record here, not corrupt: kept, and compared again at the
      // next round.
      if (key.ends_with(".topology")) {
        logger_.debug("structure blob {} changed on the leader while it was copied", key);
      } else {
        logger_.error("blob {} from the leader has SHA-256 {}, its topology says {}", key,
                      put->sha256, sha);
        (void)blobs_.remove(key);
        continue;
      }
    }
    if (put) {
      // A structure copied again (a rebalance): what was loaded from the
      // old one is stale.
      std::lock_guard lock(mutex_);
      for (auto it = loaded_.begin(); it != loaded_.end();) {
        it = topology_blob_key(it->first) == key ? loaded_.erase(it) : std::next(it);
      }
    }
    progress = progress || put.is_ok();
  }
  publish_replicas(*records);
  // Blobs may have appeared on the leader meanwhile: look again soon.
  if (progress) trigger();
}

}  // namespace rstorm::nimbus
