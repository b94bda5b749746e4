// Supervisor settings from the layered config, and the local state that
// survives a supervisor restart.
#include "supervisor/supervisor_options.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "common/config_loader.hpp"
#include "supervisor/local_state.hpp"

namespace rstorm::supervisor {
namespace {

Config load(std::vector<std::string> overrides) {
  ConfigLoadOptions options;
  options.overrides = std::move(overrides);
  auto config = load_config(options);
  EXPECT_TRUE(config) << config.status().to_string();
  return config ? *config : Config();
}

TEST(SupervisorOptionsTest, CapacityComesFromTheMachineUnlessConfigured) {
  auto machine = SupervisorOptions::from_config(load({}));
  ASSERT_TRUE(machine) << machine.status().to_string();
  EXPECT_EQ(machine->cpu, machine_cpu_points());
  EXPECT_EQ(machine->memory_mb, std::floor(machine_memory_mb()));
  EXPECT_EQ(machine->ports, (std::vector<int>{6700, 6701, 6702, 6703}));
  EXPECT_TRUE(machine->id.empty());

  auto set = SupervisorOptions::from_config(
      load({"supervisor.memory.capacity.mb=2048", "supervisor.cpu.capacity=150",
            "supervisor.id=node-7", "supervisor.rack=r2", "supervisor.slots.ports=[7000,7001]",
            "supervisor.resources.map=[gpu.count=2]", "supervisor.worker.timeout.secs=4"}));
  ASSERT_TRUE(set) << set.status().to_string();
  EXPECT_EQ(set->memory_mb, 2048);
  EXPECT_EQ(set->cpu, 150);
  EXPECT_EQ(set->id, "node-7");
  EXPECT_EQ(set->rack, "r2");
  EXPECT_EQ(set->ports, (std::vector<int>{7000, 7001}));
  EXPECT_EQ(set->generic, (std::map<std::string, double>{{"gpu.count", 2}}));
  EXPECT_EQ(set->worker_timeout, std::chrono::seconds(4));
}

// What the machine's config says to workers reaches their specs (under the
// topology's config): transport, messaging and metrics keys, not the
// supervisor's own.
TEST(SupervisorOptionsTest, WorkerKeysOfTheMachinesConfigAreKeptForItsWorkers) {
  auto o = SupervisorOptions::from_config(
      load({"worker.transport.buffer.bytes=4096", "storm.metrics.host=0.0.0.0", "supervisor.rack=r9"}));
  ASSERT_TRUE(o) << o.status().to_string();
  EXPECT_EQ(o->worker_config.get_int("worker.transport.buffer.bytes", 0), 4096);
  EXPECT_EQ(o->worker_config.get_string("storm.metrics.host", ""), "0.0.0.0");
  EXPECT_EQ(o->worker_config.find("storm.metrics.host")->origin, "command line");
  EXPECT_EQ(o->worker_config.find("supervisor.rack"), nullptr);
  EXPECT_EQ(o->worker_config.find("storm.zookeeper.servers"), nullptr);
}

TEST(SupervisorOptionsTest, MalformedResourceMapNamesTheKey) {
  auto bad = SupervisorOptions::from_config(load({"supervisor.resources.map=[gpu]"}));
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.status().message().find("supervisor.resources.map"), std::string::npos);
}

TEST(SupervisorOptionsTest, EmptySlotListIsRejected) {
  auto bad = SupervisorOptions::from_config(load({"supervisor.slots.ports=[]"}));
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.status().message().find("supervisor.slots.ports"), std::string::npos);
}

TEST(LocalStateTest, GeneratedIdIsKeptAcrossRestarts) {
  InMemoryKeyValueStore kv;
  LocalState first(kv);
  auto id = first.supervisor_id();
  ASSERT_TRUE(id);
  EXPECT_EQ(id->rfind("supervisor-", 0), 0u);
  LocalState second(kv);
  EXPECT_EQ(second.supervisor_id().value(), *id);
}

TEST(LocalStateTest, WorkerRecordsRoundTripAndAreRemoved) {
  InMemoryKeyValueStore kv;
  LocalState state(kv);
  WorkerRecord a{"wc-1", 6700, ProcessId{123, 456}, 3, 1000};
  WorkerRecord b{"wc-1", 6701, ProcessId{124, 457}, 3, 1001};
  ASSERT_TRUE(state.put_worker(a));
  ASSERT_TRUE(state.put_worker(b));
  EXPECT_EQ(state.workers().value(), (std::vector<WorkerRecord>{a, b}));
  ASSERT_TRUE(state.remove_worker(6700));
  EXPECT_EQ(state.workers().value(), (std::vector<WorkerRecord>{b}));
}

TEST(LocalStateTest, CorruptRecordIsReportedNotTrusted) {
  InMemoryKeyValueStore kv;
  ASSERT_TRUE(kv.put("worker/6700", "{not json"));
  LocalState state(kv);
  auto workers = state.workers();
  ASSERT_FALSE(workers);
  EXPECT_EQ(workers.code(), ErrorCode::kCorruption);
}

}  // namespace
}  // namespace rstorm::supervisor
