// AckerExecutor: the system component "__acker". For each tuple tree (keyed by
// its root id) it XORs the edge ids reported by the spout (init) and by bolts
// (ack); at zero the tree is complete and the spout's task hears kAckComplete.
// An explicit fail sends kAckFailed. Trees older than
// topology.message.timeout.secs are forgotten (the spout times them out itself).
#pragma once

#include "rstorm/worker/ack_table.hpp"
#include "rstorm/worker/executor.hpp"

namespace rstorm::worker {

class AckerExecutor final : public Executor {
 public:
  AckerExecutor(const ExecutorEnv& env, const ExecutorPlan& plan, std::uint64_t seed);
  ~AckerExecutor() override;

 private:
  struct Entry {
    std::uint64_t value = 0;
    TaskId spout;
    bool init = false;
    bool failed = false;
    std::int64_t created_ns = 0;
  };

  void run() override;
  // Returns the number of messages `e` carried (Envelope::messages).
  std::size_t handle(const Envelope& e);
  void handle(MessageKind kind, std::uint64_t root, std::uint64_t value, TaskId task);
  void finish(std::uint64_t root, Entry& entry, bool complete);
  void expire(std::int64_t now);

  AckTable<Entry> trees_;
  std::int64_t now_ = 0;
  std::int64_t timeout_ns_;
  std::int64_t next_sweep_ns_ = 0;
};

}  // namespace rstorm::worker
