// Where the runtime keeps its tasks' keyed state (rstorm/state.hpp), as
// topology.state.provider says: in memory (the API's InMemoryStateBackend), or
// in RocksDB (RocksDbStateBackend, on common/rocksdb_store.hpp).
//
// RocksDB: one database per task, `<dir>/task-<id>`, rather than one per
// worker process. A task's state is then one directory: a later checkpoint
// snapshots exactly that database, a rebalance moves a task by moving its
// directory, and a task's state is dropped by removing it, with no key of
// another task to filter out. The cost, a database per stateful task (its
// files, WAL and memtable), falls only on tasks that ask for state: a store
// is opened on the task's first TopologyContext::state_store() call.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "common/key_value_store.hpp"
#include "rstorm/config.hpp"
#include "rstorm/state.hpp"
#include "rstorm/status.hpp"

namespace rstorm::worker {

// A StateStore over a KeyValueStore (RocksDbStore): the store's failures
// become StateError prefixed with `where` ("RocksDB store in /x/task-7").
// Thread-safe as the KeyValueStore is.
class KeyValueStateStore final : public StateStore {
 public:
  KeyValueStateStore(std::unique_ptr<KeyValueStore> store, std::string where);

  std::optional<std::string> get(std::string_view key) override;
  void put(std::string_view key, std::string_view value) override;
  void remove(std::string_view key) override;
  std::vector<std::pair<std::string, std::string>> scan_prefix(std::string_view prefix) override;
  void apply(const std::vector<StateWrite>& writes) override;
  Frozen freeze() override;

 private:
  void check(const Status& status) const;

  const std::unique_ptr<KeyValueStore> store_;
  const std::string where_;
};

// One RocksDB database per task under `dir`: `<dir>/task-<id>`, created on
// the task's first open(). Open stores close when the backend and every
// store handed out are gone; the data stays on disk, and a backend on the
// same `dir` finds it again. Thread-safe.
class RocksDbStateBackend final : public StateBackend {
 public:
  explicit RocksDbStateBackend(std::filesystem::path dir);

  // Throws StateError naming the task and the directory when the directory
  // cannot be created or RocksDB cannot open it (not writable, held by
  // another process, corrupt).
  std::shared_ptr<StateStore> open(TaskId task, std::string_view component) override;
  // Opened, or its folder exists.
  bool holds(TaskId task) override;
  // Closes the task's database and deletes its folder.
  void discard(TaskId task, std::string_view component) override;

  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path task_dir(TaskId task) const;

 private:
  const std::filesystem::path dir_;
  std::mutex mutex_;
  std::map<TaskId, std::shared_ptr<StateStore>> stores_;  // guarded by mutex_
};

// What the caller of make_state_backend knows that the config does not.
struct StateBackendDefaults {
  // The provider when topology.state.provider is absent or null: "memory" in
  // local mode, "rocksdb" in a cluster's worker. Default "memory".
  std::string provider = "memory";
  // The RocksDB stores' folder when topology.state.rocksdb.dir is absent or
  // null: `<worker dir>/state` in a worker, `<storm.local.dir>/state/<topology
  // name>` in local mode. Default empty.
  std::filesystem::path dir;
  // The subfolder of an explicit topology.state.rocksdb.dir: the topology's
  // id (its name in local mode), so that topologies sharing the folder do not
  // share task ids. Default empty.
  std::string topology;
};

// The backend of topology.state.provider ("memory" or "rocksdb") and
// topology.state.rocksdb.dir. Opens nothing: stores open on a task's first
// use. Fails naming the key on a value of the wrong type or an unknown provider.
api::Result<std::shared_ptr<StateBackend>> make_state_backend(const Config& config,
                                                              const StateBackendDefaults& defaults);

}  // namespace rstorm::worker
