// Checkpoints of the tasks' keyed state (topology.state.checkpointing).
//
// Every topology.state.checkpoint.interval.ms the coordinator (the executor of
// the topology's lowest spout task) sends barrier N to every spout task. A
// spout task stores a snapshot of its state (its source offset, say) between
// two next_tuple calls and sends barrier N on to every task that subscribes to
// it, behind the tuples it emitted before. A bolt task with several upstream
// tasks aligns: once barrier N came from an upstream task, that task's tuples
// are held until N came from all of them; then it stores its snapshot, sends N
// on, and works off what it held. Each task reports its part done to the
// coordinator, which records N as complete in the store when every spout and
// bolt task did. The snapshots of a complete checkpoint are a consistent cut:
// every tuple a spout emitted before its barrier is in the state of every task
// downstream, and no tuple emitted after it is.
//
// A runtime that starts on a store holding a complete checkpoint restores
// every task it runs from it before open()/prepare(): spouts find the offsets
// they stored and replay from there, so that the state ends exactly as a run
// without the restart would have left it (exactly once), when the source can
// be replayed and every task of the topology restarts together.
//
// Thread contract: CheckpointStore implementations are thread-safe; the codec
// functions are pure.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "rstorm/config.hpp"
#include "rstorm/ids.hpp"
#include "rstorm/status.hpp"

namespace rstorm::worker {

// A complete checkpoint, as the coordinator records it.
struct CheckpointRecord {
  std::int64_t id = 0;          // 1, 2, ... per topology
  std::int64_t started_ms = 0;  // wall clock, ms since the epoch
  std::int64_t completed_ms = 0;
  std::uint64_t bytes = 0;  // the tasks' snapshots, summed
  std::int32_t tasks = 0;   // the tasks that stored a part
  // The recovery epoch it was taken in (FolderCheckpointStore): parts of
  // one id taken in two epochs are kept apart.
  std::int64_t epoch = 0;
  friend bool operator==(const CheckpointRecord&, const CheckpointRecord&) = default;
};

// One task's state as a checkpoint holds it: every (key, value) of its store.
using StateEntries = std::vector<std::pair<std::string, std::string>>;

// A task's part: magic and version, the checkpoint and task, the entries
// (length-prefixed), and an XXH64 of everything before it.
std::string encode_task_snapshot(std::int64_t checkpoint, TaskId task, const StateEntries& entries);
// The entries; an error naming the task and checkpoint and what is wrong
// (truncated, checksum mismatch, another task's or checkpoint's part).
api::Result<StateEntries> decode_task_snapshot(std::string_view bytes, std::int64_t checkpoint,
                                               TaskId task);

// Where checkpoints are kept. Parts are written before the checkpoint is
// recorded complete, so that the record never names a part that is missing.
class CheckpointStore {
 public:
  virtual ~CheckpointStore();
  // Stores task `task`'s part of checkpoint `checkpoint`.
  virtual api::Status put(std::int64_t checkpoint, TaskId task, std::string_view bytes) = 0;
  // The part of `record`'s checkpoint; an error naming the checkpoint and
  // task when it is missing or cannot be read.
  virtual api::Result<std::string> get(const CheckpointRecord& record, TaskId task) = 0;
  // The epoch this store writes in (FolderCheckpointStore); 0 elsewhere.
  virtual std::int64_t epoch() const { return 0; }
  // Records `record` as the last complete checkpoint, then removes every
  // checkpoint but the last `retained` complete ones (parts of checkpoints
  // that never completed included).
  virtual api::Status complete(const CheckpointRecord& record, int retained) = 0;
  // The complete checkpoints kept, oldest first (empty: none yet).
  virtual api::Result<std::vector<CheckpointRecord>> complete_checkpoints() = 0;
  // The last of them; nullopt when there is none.
  api::Result<std::optional<CheckpointRecord>> last_complete();
  // "folder /x/wc" or "memory": for messages.
  virtual std::string describe() const = 0;
};

// In memory: one process (local mode, tests). A runtime restarted on the same
// object restores from it.
class InMemoryCheckpointStore final : public CheckpointStore {
 public:
  api::Status put(std::int64_t checkpoint, TaskId task, std::string_view bytes) override;
  api::Result<std::string> get(const CheckpointRecord& record, TaskId task) override;
  api::Status complete(const CheckpointRecord& record, int retained) override;
  api::Result<std::vector<CheckpointRecord>> complete_checkpoints() override;
  std::string describe() const override { return "memory"; }

  // Checkpoints with at least one part held.
  std::vector<std::int64_t> checkpoints() const;
  // Test hook: replaces a part's bytes.
  void corrupt(std::int64_t checkpoint, TaskId task, std::string bytes);

 private:
  mutable std::mutex mutex_;
  std::map<std::int64_t, std::map<std::int32_t, std::string>> parts_;  // guarded by mutex_
  std::vector<CheckpointRecord> complete_;                             // guarded by mutex_
};

// In a folder that every worker of the topology can reach (one machine, or a
// shared file system): `<dir>/chk-<id>-e<epoch>/task-<n>` per part, written
// to a temporary name and renamed; `<dir>/complete` holds the complete
// checkpoints kept, one JSON object per line, oldest first, and is replaced
// atomically.
//
// Recovery epochs (a cluster's workers): `<dir>/epoch` holds the topology's
// epoch. A worker that starts again after an unexpected end, or joins a
// topology that already has checkpoints, moves it on (bump_epoch); every
// worker of an older epoch then ends and is started again by its supervisor,
// and all restore the same checkpoint: no task keeps state that the
// restored spouts will replay into it. Workers of different epochs do not
// talk to each other (their transports refuse each other).
// A store that every worker of a cluster's topology shares, holding the
// topology's recovery epoch (see FolderCheckpointStore): a folder, or nimbus
// (worker/process/nimbus_checkpoint_store.hpp).
class SharedCheckpointStore : public CheckpointStore {
 public:
  // The topology's epoch (0 before the first move); an error naming the
  // store when it cannot be read.
  virtual api::Result<std::int64_t> read_epoch() = 0;
  // Moves the topology's epoch on by one and returns the new one.
  virtual api::Result<std::int64_t> bump_epoch() = 0;
  // The same store, writing parts and records in `epoch`.
  virtual std::shared_ptr<SharedCheckpointStore> in_epoch(std::int64_t epoch) const = 0;
};

class FolderCheckpointStore final : public SharedCheckpointStore {
 public:
  // `epoch`: what this store's parts and records are written in.
  explicit FolderCheckpointStore(std::filesystem::path dir, std::int64_t epoch = 0);

  api::Status put(std::int64_t checkpoint, TaskId task, std::string_view bytes) override;
  api::Result<std::string> get(const CheckpointRecord& record, TaskId task) override;
  std::int64_t epoch() const override { return epoch_; }
  // The topology's epoch (0 before the first move); -1 when unreadable.
  std::int64_t current_epoch() const;
  // Moves the topology's epoch on by one, under a lock (several workers may
  // start at once), and returns the new one; an error naming the folder.
  api::Result<std::int64_t> bump_epoch() override;
  api::Result<std::int64_t> read_epoch() override;
  std::shared_ptr<SharedCheckpointStore> in_epoch(std::int64_t epoch) const override {
    return std::make_shared<FolderCheckpointStore>(dir_, epoch);
  }
  api::Status complete(const CheckpointRecord& record, int retained) override;
  api::Result<std::vector<CheckpointRecord>> complete_checkpoints() override;
  std::string describe() const override { return "folder " + dir_.string(); }

  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path part_path(std::int64_t checkpoint, std::int64_t epoch, TaskId task) const;

 private:
  const std::filesystem::path dir_;
  const std::int64_t epoch_;
  std::mutex mutex_;  // serialises complete()
};

// Chooses the newest complete checkpoint in `store` whose every part (of
// `tasks`, every spout and bolt task of the topology) can be read and
// decoded, and returns it with the entries of the `local` tasks among them.
// Parts that cannot be read are reported through `warn`, naming the task and
// checkpoint; an older checkpoint is tried next. Every worker that runs this
// on the same store makes the same choice. nullopt: there is no complete
// checkpoint; an error: there are some and none can be read.
struct RestoredCheckpoint {
  CheckpointRecord record;
  std::map<std::int32_t, StateEntries> local;  // task id -> entries
};
api::Result<std::optional<RestoredCheckpoint>> read_checkpoint(
    CheckpointStore& store, const std::vector<TaskId>& tasks, const std::vector<TaskId>& local,
    const std::function<void(const std::string&)>& warn);

// Checkpoint settings of a topology, from its config.
struct CheckpointSettings {
  bool enabled = false;                      // topology.state.checkpointing
  std::chrono::milliseconds interval{1000};  // topology.state.checkpoint.interval.ms
  int retained = 2;                          // topology.state.checkpoint.retained
};
// Fails naming the key on a wrong type or a value out of range.
api::Result<CheckpointSettings> checkpoint_settings(const Config& config);

// The store of topology.state.checkpoint.store and .dir: `provider` when the
// store key is null ("memory" in local mode, "folder" on a cluster); the
// folder is `<topology.state.checkpoint.dir or default_dir>/<topology>`.
api::Result<std::shared_ptr<CheckpointStore>> make_checkpoint_store(
    const Config& config, const std::string& provider, const std::filesystem::path& default_dir,
    const std::string& topology);

}  // namespace rstorm::worker
