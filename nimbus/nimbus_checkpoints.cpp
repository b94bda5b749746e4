// Nimbus's part of checkpoints (topology.state.checkpointing with the nimbus
// store): the recovery epoch and the complete checkpoints of each topology
// live in ZooKeeper at checkpoints/<topology id>, the parts in the blob store
// (uploaded by the workers, copied to standbys like topology code).
#include <algorithm>
#include <set>

#include "common/thrift/codec.hpp"
#include "nimbus/nimbus.hpp"
#include "nimbus/nimbus_client.hpp"

namespace rstorm::nimbus {
namespace {

constexpr std::string_view kStateType = "CheckpointState";
constexpr int kCasAttempts = 20;

std::string describe_checkpoint(const thrift::CheckpointInfo& c, const std::string& topology_id) {
  return "checkpoint " + std::to_string(c.id) + " of topology '" + topology_id +
         "' (recovery epoch " + std::to_string(c.epoch) + ")";
}

}  // namespace

Result<std::string> Nimbus::topology_id_of(const std::string& id_or_name) {
  if (!id_or_name.empty() && id_or_name.find('/') == std::string::npos) {
    auto there = store_.exists(paths_.topology(id_or_name));
    if (there && *there) return id_or_name;
  }
  auto found = find_record(id_or_name);
  if (!found) return found.status();
  return found->first.id;
}

Result<thrift::CheckpointState> Nimbus::checkpoints(const std::string& id_or_name) {
  auto id = topology_id_of(id_or_name);
  if (!id) return id.status();
  auto node =
      read_thrift_node<thrift::CheckpointState>(store_, paths_.checkpoints(*id), kStateType);
  if (!node) {
    if (node.code() == ErrorCode::kNotFound) return thrift::CheckpointState();
    return node.status();
  }
  return std::move(node->value);
}

Result<thrift::CheckpointState> Nimbus::complete_checkpoint(const std::string& topology_id,
                                                            thrift::CheckpointInfo checkpoint,
                                                            int retained) {
  if (Status s = require_leader(); !s) return s;
  auto id = topology_id_of(topology_id);
  if (!id) return id.status();
  const std::string what = describe_checkpoint(checkpoint, *id);
  // The parts this nimbus holds: all of them, or the record would name
  // parts a restore cannot find.
  auto keys = blobs_.list();
  if (!keys) return keys.status();
  const std::string prefix = checkpoint_key_prefix(*id);
  checkpoint.part_tasks.clear();
  for (const auto& key : *keys) {
    auto part = parse_checkpoint_part_key(key, prefix);
    if (part && part->checkpoint == checkpoint.id && part->epoch == checkpoint.epoch) {
      checkpoint.part_tasks.push_back(part->task);
    }
  }
  std::sort(checkpoint.part_tasks.begin(), checkpoint.part_tasks.end());
  if (checkpoint.part_tasks.size() != static_cast<std::size_t>(checkpoint.tasks)) {
    return Status(ErrorCode::kInvalidArgument,
                  what + " has " + std::to_string(checkpoint.tasks) + " parts, but nimbus holds " +
                      std::to_string(checkpoint.part_tasks.size()) + ": not recorded");
  }
  retained = std::max(1, retained);
  auto state =
      update_checkpoint_state(*id, "record " + what, [&](thrift::CheckpointState& state) -> Status {
        if (checkpoint.epoch < state.epoch) {
          return Status(ErrorCode::kInvalidArgument,
                        what + " is stale: the topology moved on to recovery epoch " +
                            std::to_string(state.epoch) + "; not recorded");
        }
        state.complete.push_back(checkpoint);
        if (state.complete.size() > static_cast<std::size_t>(retained)) {
          state.complete.erase(state.complete.begin(),
                               state.complete.end() - static_cast<std::ptrdiff_t>(retained));
        }
        return Status::ok();
      });
  if (state) remove_checkpoint_parts(*id, &*state, &*keys);
  return state;
}

Result<std::int64_t> Nimbus::advance_checkpoint_epoch(const std::string& topology_id) {
  if (Status s = require_leader(); !s) return s;
  auto id = topology_id_of(topology_id);
  if (!id) return id.status();
  auto state = update_checkpoint_state(
      *id, "move the recovery epoch of topology '" + *id + "'",
      [&](thrift::CheckpointState& state) {
        ++state.epoch;
        state.__isset.restore = false;
        for (auto c = state.complete.rbegin(); c != state.complete.rend(); ++c) {
          const bool held = std::all_of(c->part_tasks.begin(), c->part_tasks.end(), [&](int t) {
            return blobs_.info(checkpoint_part_key(*id, c->id, c->epoch, t)).is_ok();
          });
          if (held) {
            state.__set_restore(*c);
            break;
          }
          logger_.warn(
              "topology {}: checkpoint {} cannot be restored: this nimbus lacks parts of it", *id,
              c->id);
        }
        return Status::ok();
      });
  if (!state) return state.status();
  logger_.info("topology {}: recovery epoch {} -> {}, restoring {}", *id, state->epoch - 1,
               state->epoch,
               state->__isset.restore ? "checkpoint " + std::to_string(state->restore.id)
                                      : std::string("nothing"));
  return state->epoch;
}

Result<thrift::CheckpointState> Nimbus::update_checkpoint_state(
    const std::string& topology_id, const std::string& what,
    const std::function<Status(thrift::CheckpointState&)>& mutate) {
  const std::string path = paths_.checkpoints(topology_id);
  for (int attempt = 0; attempt < kCasAttempts; ++attempt) {
    thrift::CheckpointState state;
    std::int32_t version = -1;
    auto node = read_thrift_node<thrift::CheckpointState>(store_, path, kStateType);
    if (node) {
      state = std::move(node->value);
      version = node->version;
    } else if (node.code() != ErrorCode::kNotFound) {
      return node.status();
    }
    if (Status s = mutate(state); !s) return s;
    Status written = version < 0 ? create_thrift_node(store_, path, state).status()
                                 : write_thrift_node(store_, path, state, version).status();
    if (written) return state;
    if (written.code() != ErrorCode::kVersionConflict &&
        written.code() != ErrorCode::kAlreadyExists) {
      return Status(written.code(), "cannot " + what + ": " + written.message());
    }
  }
  return Status(ErrorCode::kUnavailable,
                "cannot " + what + ": its node changed under every attempt");
}

void Nimbus::remove_checkpoint_parts(const std::string& topology_id,
                                     const thrift::CheckpointState* state,
                                     const std::vector<std::string>* keys) {
  Result<std::vector<std::string>> listed = std::vector<std::string>();
  if (keys == nullptr) {
    listed = blobs_.list();
    if (!listed) return;
    keys = &*listed;
  }
  const std::string prefix = checkpoint_key_prefix(topology_id);
  std::set<std::pair<std::int64_t, std::int64_t>> kept;  // (id, epoch)
  if (state != nullptr) {
    for (const auto& c : state->complete) kept.emplace(c.id, c.epoch);
  }
  const thrift::CheckpointInfo* newest =
      state != nullptr && !state->complete.empty() ? &state->complete.back() : nullptr;
  for (const auto& key : *keys) {
    auto part = parse_checkpoint_part_key(key, prefix);
    if (!part || kept.count({part->checkpoint, part->epoch}) != 0) continue;
    if (state != nullptr) {
      // Parts of a newer checkpoint of the newest epoch may be on their way.
      if (newest == nullptr) continue;
      if (part->epoch >= newest->epoch && part->checkpoint > newest->id) continue;
      if (part->epoch > newest->epoch) continue;
    }
    (void)blobs_.remove(key);
  }
}

std::vector<std::string> Nimbus::wanted_checkpoint_parts(const std::string& topology_id) {
  bool arm = false;
  {
    std::lock_guard lock(mutex_);
    arm = checkpoints_watched_.insert(topology_id).second;
  }
  WatchCallback watch;
  if (arm) {
    watch = watches_.guard([this, topology_id](const WatchEvent&) {
      {
        std::lock_guard lock(mutex_);
        checkpoints_watched_.erase(topology_id);
      }
      trigger();
    });
  }
  auto node = read_thrift_node<thrift::CheckpointState>(store_, paths_.checkpoints(topology_id),
                                                        kStateType, std::move(watch));
  std::vector<std::string> out;
  if (!node) {
    // No node (no watch was set): look again at the next pass.
    std::lock_guard lock(mutex_);
    if (arm) checkpoints_watched_.erase(topology_id);
    return out;
  }
  for (const auto& c : node->value.complete) {
    for (std::int32_t task : c.part_tasks) {
      out.push_back(checkpoint_part_key(topology_id, c.id, c.epoch, task));
    }
  }
  return out;
}

}  // namespace rstorm::nimbus
