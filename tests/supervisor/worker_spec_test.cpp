// The worker spec and heartbeat files shared by supervisor and worker, and the
// acker layout of a slot.
#include "worker/process/worker_spec.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "worker/process/slot_runtime.hpp"

namespace rstorm::worker_process {
namespace {

WorkerSpec sample_spec() {
  WorkerSpec spec;
  spec.topology_id = "wc-7";
  spec.topology_name = "wc";
  spec.library = "/tmp/code/abc.so";
  spec.supervisor_id = "node-a";
  spec.host = "10.0.0.1";
  spec.port = 6701;
  spec.node_hosts = {{"node-a", "10.0.0.1"}, {"node-b", "10.0.0.2"}};
  spec.worker_dir = "/tmp/workers/wc-7-6701";
  spec.assignment_version = 3;
  spec.executors = {{"split", 1, 2, "node-a", 6701}, {"count", 3, 3, "node-b", 6700}};
  spec.config.set("topology.message.timeout.secs", std::int64_t{7}, "rstorm.yaml:3");
  spec.config.set("my.words", ConfigValue::List{ConfigValue("a"), ConfigValue("b")}, "command line");
  spec.heartbeat_interval_ms = 250;
  return spec;
}

TEST(WorkerSpecTest, RoundTripsThroughJsonWithConfigOrigins) {
  const WorkerSpec spec = sample_spec();
  auto back = spec_from_json(spec_to_json(spec));
  ASSERT_TRUE(back) << back.status().to_string();
  EXPECT_EQ(back->topology_id, "wc-7");
  EXPECT_EQ(back->topology_name, "wc");
  EXPECT_EQ(back->library, spec.library);
  EXPECT_EQ(back->port, 6701);
  EXPECT_EQ(back->host, "10.0.0.1");
  EXPECT_EQ(back->node_hosts, spec.node_hosts);
  EXPECT_EQ(back->host_of("node-b"), "10.0.0.2");
  EXPECT_EQ(back->host_of("node-c"), "");
  EXPECT_EQ(back->assignment_version, 3);
  EXPECT_EQ(back->executors, spec.executors);
  EXPECT_EQ(back->heartbeat_interval_ms, 250);
  EXPECT_EQ(back->config.get_int("topology.message.timeout.secs"), 7);
  EXPECT_EQ(back->config.find("topology.message.timeout.secs")->origin, "rstorm.yaml:3");
  EXPECT_EQ(back->config.get_string_list("my.words"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(back->own_executors(), (std::vector<SpecExecutor>{{"split", 1, 2, "node-a", 6701}}));
}

TEST(WorkerSpecTest, SpecMissingAFieldNamesIt) {
  auto bad = spec_from_json(R"({"topology_id": "wc-7"})");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("topology_name"), std::string::npos)
      << bad.status().message();
}

TEST(WorkerSpecTest, SpecWithoutTheWorkersHostIsRejectedNamingIt) {
  auto json = nlohmann::json::parse(spec_to_json(sample_spec()));
  json.erase("host");
  auto bad = spec_from_json(json.dump());
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.status().message().find("host"), std::string::npos) << bad.status().message();
}

TEST(WorkerSpecTest, GarbageSpecIsRejected) {
  auto bad = spec_from_json("not json {");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.code(), ErrorCode::kInvalidArgument);
}

TEST(WorkerSpecTest, HeartbeatRoundTrips) {
  WorkerHeartbeatFile h;
  h.time_ms = 1234567;
  h.pid = 42;
  h.topology_id = "wc-7";
  h.port = 6701;
  h.active = true;
  h.executors = {{"split", 1, 2, "node-a", 6701}};
  h.components["split"]["executed"] = 99;
  h.data_plane = {{"tuples_sent", 5}, {"backpressure_engaged", 2}};
  auto back = heartbeat_from_json(heartbeat_to_json(h));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->time_ms, 1234567);
  EXPECT_EQ(back->pid, 42);
  EXPECT_TRUE(back->active);
  EXPECT_EQ(back->executors, h.executors);
  EXPECT_EQ(back->components.at("split").at("executed"), 99u);
  EXPECT_EQ(back->data_plane, h.data_plane);
}

TEST(WorkerSpecTest, HeartbeatCarriesErrorsEvenWithBytesThatAreNotUtf8) {
  WorkerHeartbeatFile h;
  h.time_ms = 1;
  h.pid = 2;
  h.errors = {{"split", 3, 1700000000123, "execute threw: boom"},
              {"count", 5, 1700000000456, std::string("bad \xff byte")}};
  auto back = heartbeat_from_json(heartbeat_to_json(h));
  ASSERT_TRUE(back) << back.status().to_string();
  ASSERT_EQ(back->errors.size(), 2u);
  EXPECT_EQ(back->errors[0], h.errors[0]);
  EXPECT_EQ(back->errors[1].component, "count");
  EXPECT_EQ(back->errors[1].task, 5);
  EXPECT_EQ(back->errors[1].message, "bad \xef\xbf\xbd byte");  // U+FFFD
}

TEST(WorkerSpecTest, HeartbeatCarriesAStallOnlyWhileThereIsOne) {
  WorkerHeartbeatFile h;
  h.time_ms = 1;
  h.pid = 2;
  EXPECT_EQ(heartbeat_to_json(h).find("stall"), std::string::npos);
  h.stalled_ms = 12'345;
  h.stall_pending = 3000;
  h.stalled_spouts = {"sentences"};
  h.queued = {"count", "report", "split"};
  h.full_queues = {"count", "report"};
  auto back = heartbeat_from_json(heartbeat_to_json(h));
  ASSERT_TRUE(back) << back.status().to_string();
  EXPECT_EQ(back->stalled_ms, 12'345);
  EXPECT_EQ(back->stall_pending, 3000u);
  EXPECT_EQ(back->stalled_spouts, h.stalled_spouts);
  EXPECT_EQ(back->queued, h.queued);
  EXPECT_EQ(back->full_queues, h.full_queues);
}

TEST(WorkerSpecTest, AtomicWriteReplacesTheFile) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("rstorm-atomic-" + std::to_string(::getpid()));
  ASSERT_TRUE(write_file_atomically(path, "first"));
  ASSERT_TRUE(write_file_atomically(path, "second"));
  EXPECT_EQ(read_whole_file(path).value(), "second");
  std::filesystem::remove(path);
  EXPECT_EQ(read_whole_file(path).code(), ErrorCode::kNotFound);
}

std::vector<SpecExecutor> three_workers() {
  return {{"a", 1, 1, "n1", 6700}, {"a", 2, 2, "n1", 6701}, {"b", 3, 3, "n2", 6700}};
}

TEST(AckerLayoutTest, OneAckerPerWorkerByDefault) {
  Config config;
  auto first = acker_layout(three_workers(), config, "n1", 6700);
  auto last = acker_layout(three_workers(), config, "n2", 6700);
  ASSERT_TRUE(first && last);
  EXPECT_EQ(first->count, 3);
  EXPECT_EQ(first->here, (std::vector<int>{0}));
  EXPECT_EQ(last->here, (std::vector<int>{2}));
}

TEST(AckerLayoutTest, ExplicitAckerCountIsSpreadOverWorkers) {
  Config config;
  config.set("topology.acker.executors", std::int64_t{4});
  auto first = acker_layout(three_workers(), config, "n1", 6700);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->count, 4);
  EXPECT_EQ(first->here, (std::vector<int>{0, 3}));
  config.set("topology.acker.executors", std::int64_t{0});
  EXPECT_EQ(acker_layout(three_workers(), config, "n1", 6700)->count, 0);
}

TEST(AckerLayoutTest, AckersListedInTheAssignmentArePlacedWhereItSays) {
  auto executors = three_workers();
  executors.push_back({"__acker", -1, -1, "n2", 6700});
  executors.push_back({"__acker", -2, -2, "n1", 6700});
  Config config;
  auto here = acker_layout(executors, config, "n1", 6700);
  ASSERT_TRUE(here);
  EXPECT_EQ(here->count, 2);
  EXPECT_EQ(here->here, (std::vector<int>{1}));
}

}  // namespace
}  // namespace rstorm::worker_process
