// NimbusCheckpointStore: a cluster's checkpoints kept by nimbus (the default
// store on a cluster, topology.state.checkpoint.store: nimbus). Each part is
// a blob in nimbus's blob store, "<topology id>.checkpoint-<id>-e<epoch>-task-<n>",
// uploaded and downloaded in chunks with its SHA-256 checked, and copied to
// the standby nimbuses like topology code; the complete checkpoints and the
// recovery epoch are recorded by the leader in ZooKeeper
// (checkpoints/<topology id>), so that `rstorm describe` shows them and a
// failover keeps them. In secure mode the worker talks to nimbus's TLS port
// with its topology's worker token, which allows exactly this.
//
// Every worker of a recovery epoch restores the same checkpoint: the one the
// leader chose when it moved the epoch on (CheckpointState.restore), or one
// before it when a part of it is damaged; a part that cannot be downloaded
// for a moment (nimbus failing over) is waited for, not skipped.
//
// Thread contract: thread-safe (the client serializes its calls).
#pragma once

#include <memory>
#include <string>

#include "nimbus/nimbus_client.hpp"
#include "rstorm/worker/checkpoint.hpp"

namespace rstorm::worker_process {

class NimbusCheckpointStore final : public worker::SharedCheckpointStore {
 public:
  NimbusCheckpointStore(std::shared_ptr<nimbus::NimbusClient> client, std::string topology_id,
                        std::int64_t epoch = 0);

  api::Status put(std::int64_t checkpoint, TaskId task, std::string_view bytes) override;
  api::Result<std::string> get(const worker::CheckpointRecord& record, TaskId task) override;
  std::int64_t epoch() const override { return epoch_; }
  api::Status complete(const worker::CheckpointRecord& record, int retained) override;
  api::Result<std::vector<worker::CheckpointRecord>> complete_checkpoints() override;
  api::Result<std::int64_t> read_epoch() override;
  api::Result<std::int64_t> bump_epoch() override;
  std::shared_ptr<SharedCheckpointStore> in_epoch(std::int64_t epoch) const override {
    return std::make_shared<NimbusCheckpointStore>(client_, topology_id_, epoch);
  }
  std::string describe() const override;

 private:
  const std::shared_ptr<nimbus::NimbusClient> client_;
  const std::string topology_id_;
  const std::int64_t epoch_;
};

// A record as nimbus keeps it, and back.
worker::CheckpointRecord record_from_thrift(const thrift::CheckpointInfo& info);
thrift::CheckpointInfo record_to_thrift(const worker::CheckpointRecord& record);

}  // namespace rstorm::worker_process
