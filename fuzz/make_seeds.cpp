// fuzz_make_seeds <source dir> <corpus dir>: writes the seed corpus of every
// fuzz target, <corpus dir>/<target>/<name>, from rstorm's own encoders (a
// real frame, real ZooKeeper values, real RPC calls, real files) and from the
// example YAML files of the source tree; the seeds of a target that reads a
// selector byte first start with it. fuzz/corpus/ holds its output; run it again
// when a format changes (fuzz/README.md).
#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/transport/TBufferTransports.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "common/blob_store.hpp"
#include "common/thrift/codec.hpp"
#include "rstorm_thrift/Nimbus.h"
#include "supervisor/local_state.hpp"
#include "tests/transport/transport_test_support.hpp"
#include "worker/process/worker_spec.hpp"
#include "worker/transport/codec.hpp"

namespace rstorm::fuzz {
namespace {

namespace fs = std::filesystem;

class SeedWriter {
 public:
  explicit SeedWriter(fs::path root) : root_(std::move(root)) {}

  void write(const std::string& target, const std::string& name, char selector,
             std::string_view bytes) {
    fs::create_directories(root_ / target);
    std::ofstream out(root_ / target / name, std::ios::binary | std::ios::trunc);
    out.put(selector);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) throw std::runtime_error("cannot write " + (root_ / target / name).string());
  }
  void write_plain(const std::string& target, const std::string& name, std::string_view bytes) {
    fs::create_directories(root_ / target);
    std::ofstream out(root_ / target / name, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) throw std::runtime_error("cannot write " + (root_ / target / name).string());
  }

 private:
  fs::path root_;
};

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The body of the one frame `encoder` holds.
std::string frame_body(const transport::FrameEncoder& encoder) {
  return std::string(reinterpret_cast<const char*>(encoder.data()) + transport::kLengthPrefixBytes,
                     encoder.size() - transport::kLengthPrefixBytes);
}

void frames(SeedWriter& w) {
  using namespace transport;
  const auto plan = testing::make_test_plan();
  const PlanIndex index(*plan);
  worker::Batch tuples;
  for (std::int32_t dest : {3, 4}) tuples.push_back(testing::data_envelope(*plan, dest, dest));
  worker::Envelope side;
  side.dest = TaskId(3);
  side.tuple = Tuple(testing::stream_info(*plan, "side"), TaskId(testing::kSrcTask),
                     Values{Value(Bytes{0, 1, 255}), Value(true), Value(nullptr)});
  tuples.push_back(std::move(side));
  worker::Batch acks(2);
  acks[0].dest = TaskId(testing::kAckerTask);
  acks[0].set_control(worker::MessageKind::kAck, 42, 0x9e3779b97f4a7c15ULL, TaskId(3));
  acks[1].dest = TaskId(testing::kAckerTask);
  acks[1].set_control(worker::MessageKind::kFail, 43, 0, TaskId(4));
  const std::pair<const char*, std::function<void(FrameEncoder&)>> seeds[] = {
      {"tuples", [&](FrameEncoder& e) { (void)e.add_tuples(index, tuples, 16); }},
      {"acks", [&](FrameEncoder& e) { (void)e.add_tuples(index, acks, 16); }},
      {"hello", [](FrameEncoder& e) { e.add_hello("t", "127.0.0.1", 6701); }},
      {"hello_ack", [](FrameEncoder& e) { e.add_hello_ack(); }},
      {"refused", [](FrameEncoder& e) { e.add_refused("topology 'u' is not running here"); }},
      {"backpressure",
       [](FrameEncoder& e) {
         e.add_backpressure({TaskId(3), TaskId(4)}, true);
       }},
      {"backpressure_state", [](FrameEncoder& e) { e.add_backpressure_state({TaskId(6)}); }},
  };
  for (const auto& [name, encode] : seeds) {
    FrameEncoder encoder;
    encode(encoder);
    w.write("fuzz_frame", name, 0, frame_body(encoder));
  }
}

thrift::ComponentDef component(const std::string& id, thrift::ComponentKind::type kind,
                               const std::string& input) {
  thrift::ComponentDef c;
  c.id = id;
  c.kind = kind;
  thrift::StreamDef stream;
  stream.name = "default";
  stream.fields = {"word", "count"};
  c.__set_streams({stream});
  if (!input.empty()) {
    thrift::InputDef in;
    in.component = input;
    in.stream = "default";
    in.grouping.type = thrift::GroupingType::FIELDS;
    in.grouping.__set_fields({"word"});
    c.__set_inputs({in});
  }
  c.__set_parallelism(2);
  c.resources.__set_generic({{"gpu.count", 1.0}});
  thrift::ConfigEntry tick;
  tick.value_yaml = "5";
  tick.__set_origin("component");
  c.__set_config({{"topology.tick.tuple.freq.secs", tick}});
  return c;
}

thrift::TopologyStructure structure() {
  thrift::TopologyStructure s;
  s.name = "wc";
  s.__set_components({component("sentences", thrift::ComponentKind::SPOUT, ""),
                      component("count", thrift::ComponentKind::BOLT, "sentences")});
  return s;
}

std::map<std::string, thrift::ConfigEntry> topology_config() {
  Config config;
  config.set("topology.workers", 2, "command line");
  config.set("topology.max.spout.pending", nullptr, "defaults.yaml:40");
  config.set("topology.worker.max.heap.size.mb", 768.0, "rstorm.yaml:3");
  config.set("topology.name", "word \"count\"\n", "topology");
  config.set("supervisor.slots.ports", ConfigValue::List{6700, 6701}, "rstorm.yaml:9");
  return config_to_thrift(config);
}

thrift::SupervisorInfo supervisor_info() {
  thrift::SupervisorInfo s;
  s.id = "supervisor-1a2b3c4d";
  s.host = "10.0.0.7";
  s.__set_rack("rack-2");
  s.__set_memory_capacity_mb(4096);
  s.__set_cpu_capacity(400);
  s.__set_slots({6700, 6701, 6702, 6703});
  s.__set_generic_resources({{"gpu.count", 2}});
  s.__set_used_slots({6701});
  s.__set_start_time_ms(1700000000000);
  s.__set_heartbeat_time_ms(1700000012345);
  s.__set_version("0.1.0");
  return s;
}

thrift::Assignment assignment() {
  thrift::Assignment a;
  a.topology_id = "wc-1700000000";
  for (int i = 0; i < 3; ++i) {
    thrift::ExecutorAssignment e;
    e.executor.task_start = 1 + 2 * i;
    e.executor.task_end = 2 + 2 * i;
    e.executor.__set_component(i == 0 ? "sentences" : "count");
    e.slot.node_id = "supervisor-1a2b3c4d";
    e.slot.port = 6700 + i % 2;
    e.__set_resources(thrift::ResourceRequest());
    a.executors.push_back(std::move(e));
  }
  a.__isset.executors = true;
  a.__set_node_hosts({{"supervisor-1a2b3c4d", "10.0.0.7"}});
  a.__set_assigned_time_ms(1700000001000);
  a.__set_code_blob_key("wc-1700000000-code");
  a.__set_code_sha256(std::string(64, 'a'));
  a.__set_version(3);
  return a;
}

thrift::ErrorInfo error_info() {
  thrift::ErrorInfo e;
  e.component = "count";
  e.message = "std::runtime_error: bad tuple";
  e.__set_time_ms(1700000005000);
  e.__set_host("10.0.0.7");
  e.__set_port(6700);
  e.__set_task_id(3);
  return e;
}

thrift::SupervisorHeartbeat supervisor_heartbeat() {
  thrift::SupervisorHeartbeat h;
  h.info = supervisor_info();
  thrift::WorkerHeartbeat w;
  w.topology_id = "wc-1700000000";
  w.slot.node_id = h.info.id;
  w.slot.port = 6700;
  w.__set_executors({assignment().executors[0].executor});
  w.__set_time_ms(1700000012000);
  w.__set_uptime_secs(12);
  w.__set_errors({error_info()});
  thrift::StallInfo stall;
  stall.__set_stalled_secs(40);
  stall.__set_pending(1000);
  stall.__set_stalled_spouts({"sentences"});
  stall.__set_queued({"count"});
  w.__set_stall(stall);
  h.__set_workers({w});
  return h;
}

void thrift_values(SeedWriter& w) {
  thrift::TopologyRecord record;
  record.id = "wc-1700000000";
  record.name = "wc";
  record.__set_status(thrift::TopologyStatus::ACTIVE);
  record.__set_launch_time_ms(1700000000000);
  record.__set_code_blob_key("wc-1700000000-code");
  record.__set_code_sha256(std::string(64, 'a'));
  record.__set_structure_blob_key("wc-1700000000-structure");
  record.__set_num_workers(2);
  record.__set_component_executors({{"sentences", 1}, {"count", 2}});
  record.__set_kill_wait_secs(30);
  thrift::NimbusSummary nimbus;
  nimbus.host = "10.0.0.1";
  nimbus.port = 6627;
  nimbus.__set_is_leader(true);
  nimbus.__set_uptime_secs(3600);
  nimbus.__set_version("0.1.0");
  thrift::TopologyInfo info;
  info.summary.id = record.id;
  info.summary.name = record.name;
  info.__set_structure(structure());
  info.__set_config(topology_config());
  // The selector bytes of fuzz_thrift.cpp.
  w.write("fuzz_thrift", "supervisor_info", 0, encode_thrift(supervisor_info()));
  w.write("fuzz_thrift", "topology_record", 1, encode_thrift(record));
  w.write("fuzz_thrift", "assignment", 2, encode_thrift(assignment()));
  w.write("fuzz_thrift", "nimbus_summary", 3, encode_thrift(nimbus));
  w.write("fuzz_thrift", "error_info", 4, encode_thrift(error_info()));
  w.write("fuzz_thrift", "topology_info", 5, encode_thrift(info));
}

void rpc_calls(SeedWriter& w) {
  using apache::thrift::protocol::TBinaryProtocol;
  using apache::thrift::transport::TMemoryBuffer;
  const std::pair<const char*, std::function<void(thrift::NimbusClient&)>> calls[] = {
      {"submit",
       [](thrift::NimbusClient& c) {
         c.send_submitTopology("wc", structure(), topology_config(), "wc-code");
       }},
      {"kill",
       [](thrift::NimbusClient& c) {
         thrift::KillOptions o;
         o.__set_wait_secs(5);
         c.send_killTopology("wc", o);
       }},
      {"rebalance",
       [](thrift::NimbusClient& c) {
         thrift::RebalanceOptions o;
         o.__set_num_workers(3);
         o.__set_num_executors({{"count", 4}});
         c.send_rebalance("wc", o);
       }},
      {"heartbeat",
       [](thrift::NimbusClient& c) { c.send_supervisorHeartbeat(supervisor_heartbeat()); }},
      {"upload_chunk",
       [](thrift::NimbusClient& c) {
         c.send_uploadChunk("s1",
                            "\x7f"
                            "ELF");
       }},
      {"finish_upload",
       [](thrift::NimbusClient& c) { c.send_finishFileUpload("s1", 4, std::string(64, 'b')); }},
      {"topology_info", [](thrift::NimbusClient& c) { c.send_getTopologyInfo("wc-1700000000"); }},
  };
  for (const auto& [name, send] : calls) {
    auto buffer = std::make_shared<TMemoryBuffer>();
    thrift::NimbusClient client(std::make_shared<TBinaryProtocol>(buffer));
    send(client);
    w.write_plain("fuzz_nimbus_rpc", name, buffer->getBufferAsString());
  }
}

void yaml_files(SeedWriter& w, const fs::path& source) {
  w.write_plain("fuzz_config_yaml", "rstorm.yaml.example",
                read_file(source / "conf/rstorm.yaml.example"));
  w.write_plain("fuzz_config_yaml", "every_type.yaml",
                "topology.workers: 0x10\n"
                "topology.debug: true\n"
                "topology.stall.timeout.secs: ~\n"
                "my.app.ratio: -1.5e3\n"
                "my.app.limits: [1, .inf, 'two', [3, null]]\n"
                "my.app.name: !!str 123\n"
                "my.app.text: \"tab\\tquote\\\" \\u00e9\"\n"
                "my.app.folded: >\n  two\n  lines\n");
  // The selector bytes of fuzz_topology_yaml.cpp: 0 topology, 1 cluster.
  for (const char* name : {"linear-cpu.yaml", "diamond-network.yaml"}) {
    w.write("fuzz_topology_yaml", name, 0, read_file(source / "examples/paper" / name));
  }
  for (const char* name : {"rstorm-paper.yaml", "large.yaml"}) {
    w.write("fuzz_topology_yaml", name, 1, read_file(source / "conf/clusters" / name));
  }
}

void worker_files(SeedWriter& w) {
  namespace wp = worker_process;
  wp::WorkerSpec spec;
  spec.topology_id = "wc-1700000000";
  spec.topology_name = "wc";
  spec.library = "/var/rstorm/code/" + std::string(64, 'a') + ".so";
  spec.supervisor_id = "supervisor-1a2b3c4d";
  spec.host = "10.0.0.7";
  spec.port = 6700;
  spec.worker_dir = "/var/rstorm/workers/6700";
  spec.assignment_version = 3;
  spec.executors = {{"sentences", 1, 1, "supervisor-1a2b3c4d", 6700},
                    {"count", 2, 3, "supervisor-9f8e", 6701}};
  spec.node_hosts = {{"supervisor-9f8e", "10.0.0.8"}};
  spec.config = *config_from_thrift(topology_config());
  wp::WorkerHeartbeatFile beat;
  beat.time_ms = 1700000012000;
  beat.pid = 4242;
  beat.topology_id = spec.topology_id;
  beat.port = 6700;
  beat.active = true;
  beat.uptime_secs = 12;
  beat.executors = {spec.executors[0]};
  beat.components = {{"sentences", {{"emitted", 1200}, {"acked", 1100}}}};
  beat.data_plane = {{"frames_sent", 40}, {"bytes_sent", 81920}};
  beat.errors = {{"count", 3, 1700000005000, "std::runtime_error: bad tuple"}};
  beat.stalled_ms = 40000;
  beat.stall_pending = 1000;
  beat.stalled_spouts = {"sentences"};
  beat.queued = {"count"};
  // The selector bytes of fuzz_worker_spec.cpp: 0 spec.json, 1 heartbeat.
  w.write("fuzz_worker_spec", "spec.json", 0, wp::spec_to_json(spec));
  w.write("fuzz_worker_spec", "heartbeat", 1, wp::heartbeat_to_json(beat));
}

void local_state(SeedWriter& w) {
  InMemoryKeyValueStore store;
  supervisor::WorkerRecord record;
  record.topology_id = "wc-1700000000";
  record.port = 6700;
  record.process.pid = 4242;
  record.process.start_ticks = 987654321;
  record.assignment_version = 3;
  record.launch_time_ms = 1700000000000;
  if (!supervisor::LocalState(store).put_worker(record)) throw std::runtime_error("put_worker");
  BlobStore blobs(store, BlobStore::Options{});
  if (!blobs.put("code", "chunk")) throw std::runtime_error("blob put");
  // The selector bytes of fuzz_local_state.cpp.
  w.write("fuzz_local_state", "worker_record", 0, *store.get("worker/6700"));
  w.write("fuzz_local_state", "blob_meta", 1, *store.get("blob/meta/code"));
  w.write("fuzz_local_state", "upload_counter", 2, *store.get("blob/next-upload-id"));
}

}  // namespace
}  // namespace rstorm::fuzz

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: fuzz_make_seeds <source dir> <corpus dir>\n";
    return 2;
  }
  try {
    rstorm::fuzz::SeedWriter w(argv[2]);
    rstorm::fuzz::frames(w);
    rstorm::fuzz::thrift_values(w);
    rstorm::fuzz::rpc_calls(w);
    rstorm::fuzz::yaml_files(w, argv[1]);
    rstorm::fuzz::worker_files(w);
    rstorm::fuzz::local_state(w);
  } catch (const std::exception& e) {
    std::cerr << "fuzz_make_seeds: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
