#include "worker/process/nimbus_checkpoint_store.hpp"

#include <chrono>
#include <thread>

namespace rstorm::worker_process {
namespace {

std::string part_name(std::int64_t checkpoint, TaskId task) {
  return "part of task " + std::to_string(task.value) + " in checkpoint " +
         std::to_string(checkpoint);
}

}  // namespace

worker::CheckpointRecord record_from_thrift(const thrift::CheckpointInfo& info) {
  worker::CheckpointRecord r;
  r.id = info.id;
  r.started_ms = info.started_ms;
  r.completed_ms = info.completed_ms;
  r.bytes = static_cast<std::uint64_t>(info.bytes);
  r.tasks = info.tasks;
  r.epoch = info.epoch;
  return r;
}

thrift::CheckpointInfo record_to_thrift(const worker::CheckpointRecord& record) {
  thrift::CheckpointInfo info;
  info.id = record.id;
  info.__set_started_ms(record.started_ms);
  info.__set_completed_ms(record.completed_ms);
  info.__set_bytes(static_cast<std::int64_t>(record.bytes));
  info.__set_tasks(record.tasks);
  info.__set_epoch(record.epoch);
  return info;
}

NimbusCheckpointStore::NimbusCheckpointStore(std::shared_ptr<nimbus::NimbusClient> client,
                                             std::string topology_id, std::int64_t epoch)
    : client_(std::move(client)), topology_id_(std::move(topology_id)), epoch_(epoch) {}

std::string NimbusCheckpointStore::describe() const {
  return "nimbus at " + client_->address().to_string() + " (topology " + topology_id_ + ")";
}

api::Status NimbusCheckpointStore::put(std::int64_t checkpoint, TaskId task,
                                       std::string_view bytes) {
  auto put = client_->upload_blob(
      nimbus::checkpoint_part_key(topology_id_, checkpoint, epoch_, task.value),
      std::string(bytes));
  if (!put) {
    return api::Status::error("cannot store the " + part_name(checkpoint, task) + " in " +
                              describe() + ": " + put.status().message());
  }
  return api::Status::ok();
}

api::Result<std::string> NimbusCheckpointStore::get(const worker::CheckpointRecord& record,
                                                    TaskId task) {
  const std::string key =
      nimbus::checkpoint_part_key(topology_id_, record.id, record.epoch, task.value);
  auto bytes = client_->download_blob(key);
  // Nimbus unreachable for a moment (a failover): every worker must read the
  // same parts, so wait for it rather than fall back to an older checkpoint.
  for (int attempt = 0; !bytes && bytes.code() == ErrorCode::kUnavailable && attempt < 40;
       ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    bytes = client_->download_blob(key);
  }
  if (!bytes) {
    return api::Status::error(
        "the " + part_name(record.id, task) +
        (bytes.code() == ErrorCode::kNotFound ? " is missing from " : " cannot be read from ") +
        describe() + ": " + bytes.status().message());
  }
  return std::move(bytes).value();
}

api::Status NimbusCheckpointStore::complete(const worker::CheckpointRecord& record, int retained) {
  auto state = client_->complete_checkpoint(topology_id_, record_to_thrift(record), retained);
  if (!state) return api::Status::error(state.status().message());
  return api::Status::ok();
}

api::Result<std::vector<worker::CheckpointRecord>> NimbusCheckpointStore::complete_checkpoints() {
  auto state = client_->checkpoints(topology_id_);
  if (!state) {
    return api::Status::error("cannot read the checkpoints of " + describe() + ": " +
                              state.status().message());
  }
  std::vector<worker::CheckpointRecord> out;
  // The workers of a recovery epoch restore what the leader chose when it
  // moved the epoch on (or one before it, when a part of it is damaged).
  const bool agreed = epoch_ > 0 && state->epoch == epoch_;
  for (const auto& c : state->complete) {
    if (agreed && (!state->__isset.restore || c.epoch > state->restore.epoch ||
                   (c.epoch == state->restore.epoch && c.id > state->restore.id))) {
      continue;
    }
    out.push_back(record_from_thrift(c));
  }
  return out;
}

api::Result<std::int64_t> NimbusCheckpointStore::read_epoch() {
  auto state = client_->checkpoints(topology_id_);
  if (!state) {
    return api::Status::error("cannot read the recovery epoch from " + describe() + ": " +
                              state.status().message());
  }
  return state->epoch;
}

api::Result<std::int64_t> NimbusCheckpointStore::bump_epoch() {
  auto epoch = client_->advance_checkpoint_epoch(topology_id_);
  if (!epoch) {
    return api::Status::error("cannot move the recovery epoch in " + describe() + ": " +
                              epoch.status().message());
  }
  return *epoch;
}

}  // namespace rstorm::worker_process
