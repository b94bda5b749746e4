// Test fixture for nimbus: a real Nimbus + Thrift server in-process, over the
// in-memory coordination store and key-value store, reached through the real
// NimbusClient. Fake supervisors are SupervisorInfo nodes written into the
// store from their own sessions (the real registration protocol).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "common/blob_store.hpp"
#include "common/cluster_paths.hpp"
#include "common/in_memory_coordination.hpp"
#include "common/key_value_store.hpp"
#include "common/sha256.hpp"
#include "common/thrift/codec.hpp"
#include "nimbus/nimbus.hpp"
#include "nimbus/nimbus_client.hpp"
#include "nimbus/nimbus_server.hpp"
#include "tests/common/poll.hpp"

namespace rstorm::nimbus::testing {

inline thrift::SupervisorInfo supervisor_info(const std::string& id, const std::string& rack,
                                              double memory_mb = 4096, double cpu = 400,
                                              std::vector<int> ports = {6700, 6701, 6702, 6703}) {
  thrift::SupervisorInfo info;
  info.id = id;
  info.host = "127.0.0.1";
  info.rack = rack;
  info.memory_capacity_mb = memory_mb;
  info.cpu_capacity = cpu;
  info.slots = std::move(ports);
  return info;
}

inline thrift::ComponentDef component(const std::string& id, bool spout, int parallelism,
                                      std::vector<std::string> fields) {
  thrift::ComponentDef c;
  c.id = id;
  c.kind = spout ? thrift::ComponentKind::SPOUT : thrift::ComponentKind::BOLT;
  thrift::StreamDef s;
  s.name = "default";
  s.fields = std::move(fields);
  c.streams.push_back(s);
  c.parallelism = parallelism;
  return c;
}

inline thrift::InputDef input(const std::string& from, thrift::GroupingType::type type,
                              std::vector<std::string> fields = {}) {
  thrift::InputDef in;
  in.component = from;
  in.stream = "default";
  in.grouping.type = type;
  if (!fields.empty()) in.grouping.__set_fields(fields);
  return in;
}

// words(2) -> split(3, shuffle) -> count(2, fields "word").
inline thrift::TopologyStructure word_count_structure(double count_memory_mb = 128) {
  thrift::TopologyStructure s;
  s.name = "wc";
  s.components.push_back(component("count", false, 2, {"word", "count"}));
  s.components.back().inputs.push_back(input("split", thrift::GroupingType::FIELDS, {"word"}));
  s.components.back().resources.onheap_mb = count_memory_mb;
  s.components.push_back(component("split", false, 3, {"word"}));
  s.components.back().inputs.push_back(input("words", thrift::GroupingType::SHUFFLE));
  s.components.push_back(component("words", true, 2, {"sentence"}));
  return s;
}

class NimbusFixture : public ::testing::Test {
 protected:
  void SetUp() override { start_nimbus(); }
  void TearDown() override {
    client_.reset();
    stop_nimbus();
  }

  virtual NimbusOptions options() {
    NimbusOptions o;
    o.root = "/rstorm";
    o.monitor_period = std::chrono::milliseconds(200);
    if (start_with_short_worker_timeouts_) {
      o.task_launch = std::chrono::milliseconds(500);
      o.task_timeout = std::chrono::milliseconds(3000);
    }
    return o;
  }

  // The session nimbus uses; a test may put a store of its own in front.
  virtual std::unique_ptr<CoordinationStore> connect_store() { return service_->connect(); }

  void start_nimbus() {
    store_ = connect_store();
    blobs_ = std::make_unique<BlobStore>(kv_, BlobStore::Options{});
    nimbus_ = std::make_unique<Nimbus>(*store_, *blobs_, options(), Logger::null());
    NimbusServer::Options server_options;
    server_options.port = 0;
    server_ = std::make_unique<NimbusServer>(*nimbus_, server_options, Logger::null());
    ASSERT_TRUE(server_->start());
    ASSERT_TRUE(nimbus_->start(server_->port()));
    ASSERT_TRUE(rstorm::testing::eventually([&] { return nimbus_->is_leader(); }));
    NimbusClient::Options co;
    co.seeds = {{"127.0.0.1", server_->port()}};
    auto client = NimbusClient::connect(co);
    ASSERT_TRUE(client) << client.status().to_string();
    client_ = std::move(*client);
  }

  void stop_nimbus() {
    if (nimbus_) nimbus_->stop();
    if (server_) server_->stop();
    server_.reset();
    nimbus_.reset();
    blobs_.reset();
    store_.reset();
  }

  // Registers a supervisor from its own session; destroying it unregisters.
  std::unique_ptr<CoordinationStore> add_supervisor(const thrift::SupervisorInfo& info) {
    auto session = service_->connect();
    EXPECT_TRUE(session->ensure_path(paths_.supervisors()));
    auto created =
        session->create(paths_.supervisor(info.id), encode_thrift(info), CreateMode::kEphemeral);
    EXPECT_TRUE(created) << created.status().to_string();
    return session;
  }

  std::string upload_code(const std::string& bytes = "pretend this is an ELF library") {
    const std::string key = "code-" + std::to_string(++uploads_);
    auto uploaded = client_->upload_blob(key, bytes, 7);
    EXPECT_TRUE(uploaded) << uploaded.status().to_string();
    return key;
  }

  std::map<std::string, thrift::ConfigEntry> config(std::map<std::string, std::string> yaml = {}) {
    std::map<std::string, thrift::ConfigEntry> out;
    for (auto& [k, v] : yaml) {
      out[k].value_yaml = v;
      out[k].origin = "test";
    }
    return out;
  }

  Result<std::string> submit(const std::string& name,
                             thrift::TopologyStructure s = word_count_structure(),
                             std::map<std::string, std::string> yaml = {}) {
    return client_->submit_topology(name, s, config(yaml), upload_code());
  }

  std::optional<thrift::Assignment> assignment(const std::string& id) {
    auto node = store_->get(paths_.assignment(id));
    if (!node) return std::nullopt;
    auto a = decode_thrift<thrift::Assignment>(node->data, "Assignment");
    if (!a) return std::nullopt;
    return *a;
  }

  std::optional<thrift::TopologyRecord> record(const std::string& id) {
    auto node = store_->get(paths_.topology(id));
    if (!node) return std::nullopt;
    auto r = decode_thrift<thrift::TopologyRecord>(node->data, "TopologyRecord");
    if (!r) return std::nullopt;
    return *r;
  }

  std::shared_ptr<InMemoryCoordinationService> service_ = InMemoryCoordinationService::create();
  ClusterPaths paths_{"/rstorm"};
  InMemoryKeyValueStore kv_;
  std::unique_ptr<CoordinationStore> store_;
  std::unique_ptr<BlobStore> blobs_;
  std::unique_ptr<Nimbus> nimbus_;
  std::unique_ptr<NimbusServer> server_;
  std::unique_ptr<NimbusClient> client_;
  int uploads_ = 0;
  bool start_with_short_worker_timeouts_ = false;
};

}  // namespace rstorm::nimbus::testing
