// Thrift structs round-trip through the compact codec; bad bytes are errors.
#include "common/thrift/codec.hpp"

#include <gtest/gtest.h>

#include "common/in_memory_coordination.hpp"

namespace rstorm {
namespace {

namespace t = rstorm::thrift;

t::TopologyStructure word_count() {
  t::StreamDef words;
  words.name = "default";
  words.fields = {"word"};
  t::ComponentDef spout;
  spout.id = "sentences";
  spout.kind = t::ComponentKind::SPOUT;
  spout.streams = {words};
  spout.parallelism = 2;
  spout.resources.onheap_mb = 256;
  spout.resources.cpu_pcore_percent = 50;
  spout.resources.generic = {{"gpu.count", 1.0}};
  t::ComponentDef count;
  count.id = "count";
  count.kind = t::ComponentKind::BOLT;
  t::InputDef input;
  input.component = "sentences";
  input.stream = "default";
  input.grouping.type = t::GroupingType::FIELDS;
  input.grouping.__set_fields({"word"});
  count.inputs = {input};
  count.parallelism = 4;
  count.num_tasks = 8;
  t::TopologyStructure topology;
  topology.name = "wc";
  topology.components = {spout, count};
  return topology;
}

template <typename T>
void expect_round_trip(const T& value, std::string_view name) {
  const std::string bytes = encode_thrift(value);
  auto decoded = decode_thrift<T>(bytes, name);
  ASSERT_TRUE(decoded) << decoded.status().to_string();
  EXPECT_EQ(*decoded, value);
}

TEST(ThriftCodec, TopologyStructureRoundTrips) {
  auto topology = word_count();
  expect_round_trip(topology, "TopologyStructure");
  auto decoded = decode_thrift<t::TopologyStructure>(encode_thrift(topology), "TopologyStructure");
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->components[1].inputs[0].grouping.fields, std::vector<std::string>{"word"});
  EXPECT_EQ(decoded->components[1].num_tasks, 8);
  EXPECT_EQ(decoded->components[0].resources.generic.at("gpu.count"), 1.0);
  // Defaults come from the IDL: Storm's 128 MB / 10 points per executor.
  EXPECT_EQ(decoded->components[1].resources.onheap_mb, 128.0);
  EXPECT_EQ(decoded->components[1].resources.cpu_pcore_percent, 10.0);
}

TEST(ThriftCodec, SupervisorInfoRoundTrips) {
  t::SupervisorInfo s;
  s.id = "sup-1";
  s.host = "127.0.0.1";
  s.rack = "r1";
  s.memory_capacity_mb = 4096;
  s.cpu_capacity = 400;
  s.slots = {6700, 6701, 6702, 6703};
  s.used_slots = {6701};
  s.generic_resources = {{"gpu.count", 2}};
  s.heartbeat_time_ms = 1234567;
  expect_round_trip(s, "SupervisorInfo");
}

TEST(ThriftCodec, AssignmentRoundTrips) {
  t::Assignment a;
  a.topology_id = "wc-1-1700000000";
  for (int task = 1; task <= 3; ++task) {
    t::ExecutorAssignment e;
    e.executor.task_start = task;
    e.executor.task_end = task;
    e.executor.component = task == 1 ? "sentences" : "count";
    e.slot.node_id = task == 3 ? "sup-2" : "sup-1";
    e.slot.port = 6700;
    a.executors.push_back(e);
  }
  a.node_hosts = {{"sup-1", "127.0.0.1"}, {"sup-2", "127.0.0.1"}};
  a.code_sha256 = std::string(64, 'a');
  a.version = 3;
  expect_round_trip(a, "Assignment");
}

TEST(ThriftCodec, TopologyRecordAndSummariesRoundTrip) {
  t::TopologyRecord r;
  r.id = "wc-1";
  r.name = "wc";
  r.status = t::TopologyStatus::UNSCHEDULABLE;
  r.status_reason = "component 'count' asks 4096 MB per executor; the largest free node has 2048 MB";
  r.component_executors = {{"count", 4}};
  expect_round_trip(r, "TopologyRecord");

  t::ClusterSummary c;
  t::NimbusSummary n;
  n.host = "127.0.0.1";
  n.port = 6627;
  n.is_leader = true;
  c.nimbuses = {n};
  t::TopologySummary ts;
  ts.id = "wc-1";
  ts.name = "wc";
  ts.num_workers = 2;
  c.topologies = {ts};
  expect_round_trip(c, "ClusterSummary");

  t::WorkerHeartbeat hb;
  hb.topology_id = "wc-1";
  hb.slot.node_id = "sup-1";
  hb.slot.port = 6701;
  hb.time_ms = 99;
  expect_round_trip(hb, "WorkerHeartbeat");
}

TEST(ThriftCodec, ExceptionCarriesItsMessage) {
  t::NotLeaderException e;
  e.msg = "nimbus 127.0.0.1:6627 is not the leader";
  e.leader_host = "127.0.0.1";
  e.leader_port = 6628;
  expect_round_trip(e, "NotLeaderException");
}

TEST(ThriftCodec, TruncatedBytesAreAnErrorNamingTheType) {
  const std::string bytes = encode_thrift(word_count());
  for (std::size_t cut : {bytes.size() - 1, bytes.size() / 2, std::size_t{1}}) {
    auto decoded = decode_thrift<t::TopologyStructure>(bytes.substr(0, cut), "TopologyStructure");
    ASSERT_FALSE(decoded) << "cut at " << cut;
    EXPECT_EQ(decoded.code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(decoded.status().message().rfind("cannot decode TopologyStructure from " +
                                                   std::to_string(cut) + " bytes: ",
                                               0),
              0u)
        << decoded.status().message();
  }
}

TEST(ThriftCodec, GarbageBytesAreAnError) {
  for (std::string garbage :
       {std::string("\xff\xff\xff\xff\xff\xff\xff\xff", 8), std::string("hello world"),
        std::string("\x19\xff\xff\xff\xff\x0f", 6), std::string()}) {
    auto decoded = decode_thrift<t::SupervisorInfo>(garbage, "SupervisorInfo");
    EXPECT_FALSE(decoded) << "decoded garbage of " << garbage.size() << " bytes";
  }
}

TEST(ThriftCodec, HugeDeclaredContainerIsRejectedWithoutAllocating) {
  // Field 6 (slots: list<i32>) claiming 2^31-ish elements in a short input.
  t::SupervisorInfo s;
  s.id = "x";
  s.host = "h";
  s.slots = {1, 2, 3};
  std::string valid = encode_thrift(s);
  // Replace the list header's size with a huge varint: find the list header
  // byte 0x35 (size 3, type i32) and rewrite it as "size follows" + varint.
  auto pos = valid.find('\x35');
  ASSERT_NE(pos, std::string::npos);
  std::string forged = valid.substr(0, pos) + std::string("\xf5\xff\xff\xff\xff\x07", 6) +
                       valid.substr(pos + 1);
  auto decoded = decode_thrift<t::SupervisorInfo>(forged, "SupervisorInfo");
  EXPECT_FALSE(decoded);
}

TEST(ThriftCodec, MissingRequiredFieldIsAnError) {
  // An empty struct (just STOP) lacks SupervisorInfo's required id and host.
  auto decoded = decode_thrift<t::SupervisorInfo>(std::string("\x00", 1), "SupervisorInfo");
  ASSERT_FALSE(decoded);
  EXPECT_NE(decoded.status().message().find("SupervisorInfo"), std::string::npos);
}

TEST(ThriftCodec, TrailingBytesAreAnError) {
  t::WorkerSlot slot;
  slot.node_id = "sup-1";
  slot.port = 6700;
  auto decoded = decode_thrift<t::WorkerSlot>(encode_thrift(slot) + "xx", "WorkerSlot");
  ASSERT_FALSE(decoded);
  EXPECT_NE(decoded.status().message().find("2 trailing bytes"), std::string::npos)
      << decoded.status().message();
}

TEST(ThriftCodec, ConfigRoundTripsWithOrigins) {
  Config config;
  config.set("topology.workers", 4, "command line");
  config.set("topology.debug", true, "topology");
  config.set("supervisor.slots.ports", ConfigValue::List{6700, 6701}, "/etc/rstorm.yaml:3");
  config.set("topology.name", "word \"count\"", "topology");
  config.set("topology.max.spout.pending", nullptr, "defaults.yaml:50");
  config.set("topology.component.cpu.pcore.percent", 12.5, "topology");
  auto back = config_from_thrift(config_to_thrift(config));
  ASSERT_TRUE(back) << back.status().to_string();
  EXPECT_EQ(back->entries().size(), config.entries().size());
  for (const auto& [key, entry] : config.entries()) {
    ASSERT_TRUE(back->contains(key)) << key;
    EXPECT_EQ(back->find(key)->value, entry.value) << key;
    EXPECT_EQ(back->find(key)->origin, entry.origin) << key;
  }
}

TEST(ThriftCodec, UnreadableConfigValueNamesTheKey) {
  std::map<std::string, t::ConfigEntry> entries;
  t::ConfigEntry bad;
  bad.value_yaml = "[1, 2";
  bad.origin = "topology";
  entries["topology.bad"] = bad;
  auto config = config_from_thrift(entries);
  ASSERT_FALSE(config);
  EXPECT_NE(config.status().message().find("config key 'topology.bad' (from topology)"),
            std::string::npos)
      << config.status().message();
}

// What nimbus receives in submitTopology (and a worker reads from its spec)
// meets the same schema as the client's own config.
TEST(ThriftCodec, ConfigOutsideTheSchemaNamesKeyOriginAndExpected) {
  std::map<std::string, t::ConfigEntry> entries;
  t::ConfigEntry pending;
  pending.value_yaml = "-5";
  pending.origin = "rstorm.yaml:12";
  entries["topology.max.spout.pending"] = pending;
  t::ConfigEntry typo;
  typo.value_yaml = "4";
  typo.origin = "command line";
  entries["topology.wokers"] = typo;
  auto config = config_from_thrift(entries);
  ASSERT_FALSE(config);
  EXPECT_EQ(config.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(config.status().message(),
            "topology.max.spout.pending: -5 (rstorm.yaml:12) is out of range: expected an integer "
            ">= 1 or null; topology.wokers (command line) is not a config key rstorm reads; did "
            "you mean 'topology.workers'?");
}

TEST(ThriftNode, SupervisorRegistrationRoundTripsThroughTheStore) {
  auto service = InMemoryCoordinationService::create();
  auto store = service->connect();
  ASSERT_TRUE(store->ensure_path("/rstorm/supervisors"));
  t::SupervisorInfo info;
  info.id = "sup-1";
  info.host = "127.0.0.1";
  info.slots = {6700, 6701};
  ASSERT_TRUE(create_thrift_node(*store, "/rstorm/supervisors/sup-1", info, CreateMode::kEphemeral));
  auto read = read_thrift_node<t::SupervisorInfo>(*store, "/rstorm/supervisors/sup-1",
                                                  "SupervisorInfo");
  ASSERT_TRUE(read) << read.status().to_string();
  EXPECT_EQ(read->value, info);
  EXPECT_EQ(read->version, 0);
  info.used_slots = {6700};
  EXPECT_EQ(write_thrift_node(*store, "/rstorm/supervisors/sup-1", info, 0).value(), 1);
  EXPECT_EQ(write_thrift_node(*store, "/rstorm/supervisors/sup-1", info, 0).code(),
            ErrorCode::kVersionConflict);
}

TEST(ThriftNode, NodeWithInvalidValueIsCorruptionNamingPathAndType) {
  auto service = InMemoryCoordinationService::create();
  auto store = service->connect();
  ASSERT_TRUE(store->create("/assignment", "not thrift"));
  auto read = read_thrift_node<t::Assignment>(*store, "/assignment", "Assignment");
  ASSERT_FALSE(read);
  EXPECT_EQ(read.code(), ErrorCode::kCorruption);
  EXPECT_EQ(read.status().message().rfind("node /assignment does not hold a valid Assignment: ", 0),
            0u)
      << read.status().message();
  EXPECT_EQ(read_thrift_node<t::Assignment>(*store, "/none", "Assignment").code(),
            ErrorCode::kNotFound);
}

}  // namespace
}  // namespace rstorm
