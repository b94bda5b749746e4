// Nimbus through its Thrift client, in-process, on the in-memory store.
#include <gtest/gtest.h>
#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/transport/TBufferTransports.h>
#include <thrift/transport/TSocket.h>

#include <atomic>
#include <future>
#include <mutex>
#include <set>

#include "nimbus/submitter.hpp"
#include "nimbus/topology_structure.hpp"
#include "rstorm_thrift/Nimbus.h"
#include "scheduler/scheduler.hpp"
#include "tests/nimbus/nimbus_fixture.hpp"

namespace rstorm::nimbus::testing {
namespace {

using rstorm::testing::eventually;

class NimbusServiceTest : public NimbusFixture {};

std::map<std::string, std::pair<std::string, int>> slots_by_executor(const thrift::Assignment& a) {
  std::map<std::string, std::pair<std::string, int>> out;
  for (const auto& e : a.executors) {
    out[e.executor.component + ":" + std::to_string(e.executor.task_start)] = {e.slot.node_id,
                                                                               e.slot.port};
  }
  return out;
}

// The cluster the scheduler library sees for these registrations.
scheduler::Cluster cluster_of(const std::vector<thrift::SupervisorInfo>& infos) {
  scheduler::Cluster cluster;
  for (const auto& info : infos) {
    scheduler::NodeSpec node;
    node.id = scheduler::NodeId(info.id);
    node.host = info.host;
    node.rack = scheduler::RackId(info.rack);
    node.memory_mb = info.memory_capacity_mb;
    node.cpu = info.cpu_capacity;
    node.ports.assign(info.slots.begin(), info.slots.end());
    cluster.nodes.push_back(node);
  }
  return cluster;
}

// A frame over NimbusServer::Options::max_frame_bytes is refused on that
// connection before it is read; one under it is served; the server stays up.
// The call is getTopologyInfo("x") padded with unknown i32 fields (skipped by
// the reader), so that only the frame's size, not a string's or a list's,
// goes over a limit.
TEST_F(NimbusServiceTest, FrameOverTheConfiguredLimitClosesOnlyItsConnection) {
  NimbusServer::Options o;
  o.port = 0;
  o.max_frame_bytes = 64 * 1024;
  NimbusServer small(*nimbus_, o, Logger::null());
  ASSERT_TRUE(small.start().is_ok());
  auto call = [&](int padding_fields) -> std::string {
    using namespace apache::thrift;
    auto socket = std::make_shared<transport::TSocket>("127.0.0.1", small.port());
    auto framed = std::make_shared<transport::TFramedTransport>(socket);
    auto protocol = std::make_shared<protocol::TBinaryProtocol>(framed);
    framed->open();
    protocol->writeMessageBegin("getTopologyInfo", protocol::T_CALL, 1);
    protocol->writeStructBegin("args");
    protocol->writeFieldBegin("id", protocol::T_STRING, 1);
    protocol->writeString(std::string("x"));
    protocol->writeFieldEnd();
    for (int k = 0; k < padding_fields; ++k) {
      protocol->writeFieldBegin("pad", protocol::T_I32, static_cast<std::int16_t>(100 + k % 30000));
      protocol->writeI32(k);
      protocol->writeFieldEnd();
    }
    protocol->writeFieldStop();
    protocol->writeStructEnd();
    protocol->writeMessageEnd();
    framed->flush();
    thrift::NimbusClient client(protocol);
    try {
      thrift::TopologyInfo info;
      client.recv_getTopologyInfo(info);
      return "answered";
    } catch (const thrift::NotFoundException&) {
      return "not found";
    } catch (const TException& e) {
      return "failed";
    }
  };
  EXPECT_EQ(call(1000), "not found");     // about 7 KB
  EXPECT_EQ(call(15000), "failed");       // about 105 KB
  EXPECT_EQ(call(1000), "not found");
  small.stop();
}

TEST_F(NimbusServiceTest, SubmitListDescribeKillThroughThriftClient) {
  auto s1 = add_supervisor(supervisor_info("sup-1", "r1"));
  auto id = submit("wc");
  ASSERT_TRUE(id) << id.status().to_string();
  EXPECT_EQ(id->rfind("wc-", 0), 0u) << *id;
  ASSERT_TRUE(eventually([&] { return assignment(*id).has_value(); }));

  auto cluster = client_->cluster_info();
  ASSERT_TRUE(cluster);
  ASSERT_EQ(cluster->topologies.size(), 1u);
  EXPECT_EQ(cluster->topologies[0].name, "wc");
  EXPECT_EQ(cluster->topologies[0].status, thrift::TopologyStatus::ACTIVE);
  EXPECT_EQ(cluster->topologies[0].num_executors, 7);
  EXPECT_EQ(cluster->topologies[0].num_tasks, 7);
  ASSERT_EQ(cluster->supervisors.size(), 1u);
  EXPECT_EQ(cluster->supervisors[0].info.id, "sup-1");
  ASSERT_EQ(cluster->nimbuses.size(), 1u);
  EXPECT_TRUE(cluster->nimbuses[0].is_leader);
  EXPECT_EQ(cluster->nimbuses[0].port, server_->port());

  auto info = client_->topology_info("wc");  // by name
  ASSERT_TRUE(info) << info.status().to_string();
  EXPECT_EQ(info->summary.id, *id);
  EXPECT_EQ(info->executors.size(), 7u);
  EXPECT_EQ(info->structure.components.size(), 3u);
  auto placement = client_->placement(*id);
  ASSERT_TRUE(placement);
  EXPECT_EQ(placement->scheduler, "resource-aware");
  EXPECT_EQ(placement->assignment.executors.size(), 7u);
  // 2x3 words->split pairs + 3x2 split->count pairs, all on one node.
  const auto& n = placement->network;
  EXPECT_EQ(n.same_worker + n.same_node, 12);
  EXPECT_EQ(n.same_rack + n.cross_rack, 0);

  // The code is served back byte for byte.
  auto code = client_->download_blob(record(*id)->code_blob_key);
  ASSERT_TRUE(code) << code.status().to_string();
  EXPECT_EQ(*code, "pretend this is an ELF library");

  ASSERT_TRUE(client_->kill_topology("wc", 0));
  ASSERT_TRUE(eventually([&] { return !record(*id) && !assignment(*id); }));
  auto after = client_->cluster_info();
  ASSERT_TRUE(after);
  EXPECT_TRUE(after->topologies.empty());
  // The blobs go in the same removal, after the record: wait for them too.
  EXPECT_TRUE(eventually([&] {
    auto blobs = blobs_->list();
    return blobs && blobs->empty();
  })) << "code and structure blobs are freed on kill";
}

TEST_F(NimbusServiceTest, PlacementEqualsWhatTheSchedulerLibraryComputes) {
  const std::vector<thrift::SupervisorInfo> infos = {
      supervisor_info("sup-1", "r1", 1024, 200, {6700, 6701}),
      supervisor_info("sup-2", "r1", 1024, 200, {6700, 6701}),
      supervisor_info("sup-3", "r2", 2048, 400, {6700})};
  std::vector<std::unique_ptr<CoordinationStore>> sups;
  for (const auto& info : infos) sups.push_back(add_supervisor(info));
  const auto structure = word_count_structure(300);
  auto id = submit("wc", structure);
  ASSERT_TRUE(id) << id.status().to_string();
  ASSERT_TRUE(eventually([&] { return assignment(*id).has_value(); }));

  const scheduler::Cluster cluster = cluster_of(infos);
  auto request = request_from_structure(*id, structure, Config());
  ASSERT_TRUE(request);
  auto expected = scheduler::schedule(cluster, {*request});
  ASSERT_TRUE(expected);
  const auto& p = expected.value().topologies[0];
  ASSERT_TRUE(p.scheduled) << p.reason;
  std::map<std::string, std::pair<std::string, int>> want;
  for (std::size_t i = 0; i < request->executors.size(); ++i) {
    want[request->executors[i].component + ":" + std::to_string(request->executors[i].first_task)] =
        {p.executor_slots[i].node.value(), p.executor_slots[i].port};
  }
  EXPECT_EQ(slots_by_executor(*assignment(*id)), want);
  EXPECT_EQ(assignment(*id)->version, 1);
}

// topology.acker.executors set: the ackers run where the scheduler placed and
// charged them. The assignment lists them ("__acker", tasks -1, -2, ...; the
// workers read them from there), and a topology that comes later, placed
// before the running one (its name sorts first), moves none of them.
TEST_F(NimbusServiceTest, AckersOfTopologyAckerExecutorsAreAssignedWhereTheSchedulerPlacedThem) {
  const std::vector<thrift::SupervisorInfo> infos = {
      supervisor_info("sup-1", "r1", 2048, 400, {6700, 6701}),
      supervisor_info("sup-2", "r1", 2048, 400, {6700, 6701})};
  std::vector<std::unique_ptr<CoordinationStore>> sups;
  for (const auto& info : infos) sups.push_back(add_supervisor(info));
  const auto structure = word_count_structure();
  auto id = submit("wc", structure, {{"topology.acker.executors", "2"}});
  ASSERT_TRUE(id) << id.status().to_string();
  ASSERT_TRUE(eventually([&] { return assignment(*id).has_value(); }));

  const scheduler::Cluster cluster = cluster_of(infos);
  Config conf;
  conf.set("topology.acker.executors", std::int64_t{2}, "test");
  auto request = request_from_structure(*id, structure, conf);
  ASSERT_TRUE(request);
  auto expected = scheduler::schedule(cluster, {*request});
  ASSERT_TRUE(expected);
  const auto& p = expected.value().topologies[0];
  ASSERT_TRUE(p.scheduled) << p.reason;
  ASSERT_EQ(p.acker_slots.size(), 2u);
  const auto first = *assignment(*id);
  const auto slots = slots_by_executor(first);
  for (int a = 0; a < 2; ++a) {
    const std::string key = "__acker:" + std::to_string(-1 - a);
    ASSERT_TRUE(slots.count(key)) << key;
    EXPECT_EQ(slots.at(key), std::make_pair(p.acker_slots[a].node.value(), p.acker_slots[a].port));
  }
  for (const auto& e : first.executors) {
    if (e.executor.component != "__acker") continue;
    EXPECT_EQ(e.resources.onheap_mb, request->acker_onheap_mb);
    EXPECT_EQ(e.resources.cpu_pcore_percent, request->acker_cpu);
  }

  auto other = submit("a-first", structure, {{"topology.acker.executors", "1"}});
  ASSERT_TRUE(other) << other.status().to_string();
  ASSERT_TRUE(eventually([&] { return assignment(*other).has_value(); }));
  const auto still = *assignment(*id);
  EXPECT_EQ(still.version, 1);
  EXPECT_EQ(slots_by_executor(still), slots);
}

// Nimbus on a clock that stands still until the test moves it.
class NimbusClockTest : public NimbusFixture {
 protected:
  NimbusOptions options() override {
    NimbusOptions o = NimbusFixture::options();
    o.now_ms = [this] { return now_ms_.load(); };
    return o;
  }
  std::atomic<std::int64_t> now_ms_{std::chrono::duration_cast<std::chrono::milliseconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count()};

  // Moves the clock on by `ms` in steps of 5 s, `alive` heartbeating at
  // each step with a heartbeat of every worker `topology_id`'s assignment
  // gives them: they stay alive, their workers too.
  void advance_with_heartbeats(std::int64_t ms, const std::vector<std::string>& alive,
                               const std::string& topology_id) {
    for (std::int64_t done = 0; done < ms; done += 5000) {
      now_ms_ += std::min<std::int64_t>(5000, ms - done);
      auto a = assignment(topology_id);
      for (const std::string& node : alive) {
        thrift::SupervisorHeartbeat beat;
        beat.info = supervisor_info(node, "r1");
        std::set<int> ports;
        if (a) {
          for (const auto& e : a->executors) {
            if (e.slot.node_id == node) ports.insert(e.slot.port);
          }
        }
        for (int port : ports) {
          thrift::WorkerHeartbeat w;
          w.topology_id = topology_id;
          w.slot.node_id = node;
          w.slot.port = port;
          beat.workers.push_back(w);
        }
        ASSERT_TRUE(nimbus_->supervisor_heartbeat(beat));
      }
    }
  }
};

// A supervisor whose registration disappears (its session ended: it died, or
// was cut off) keeps its executors until nimbus.supervisor.timeout.secs
// after it was last heard from, as in Storm: its workers may be running on
// (they stop a little before), and a supervisor restarted meanwhile takes
// them over. Then only its executors move.
TEST_F(NimbusClockTest, SupervisorRegistrationDisappearingReschedulesOnlyItsExecutors) {
  auto s1 = add_supervisor(supervisor_info("sup-1", "r1", 512, 400, {6700}));
  auto s2 = add_supervisor(supervisor_info("sup-2", "r1", 512, 400, {6700}));
  auto s3 = add_supervisor(supervisor_info("sup-3", "r1", 1024, 400, {6700}));
  // 7 executors of 128 MB plus one acker per worker: needs more than one node.
  auto id = submit("wc");
  ASSERT_TRUE(id) << id.status().to_string();
  ASSERT_TRUE(eventually([&] { return assignment(*id).has_value(); }));
  const auto before = slots_by_executor(*assignment(*id));
  std::set<std::string> used;
  for (const auto& [e, slot] : before) used.insert(slot.first);
  ASSERT_GE(used.size(), 2u);
  const std::string victim = *used.begin();
  // The victim's session ends: its ephemeral registration disappears.
  if (victim == "sup-1") s1.reset();
  if (victim == "sup-2") s2.reset();
  if (victim == "sup-3") s3.reset();
  const auto rounds = nimbus_->rounds();
  nimbus_->trigger();
  ASSERT_TRUE(eventually([&] { return nimbus_->rounds() > rounds + 2; }));
  EXPECT_EQ(assignment(*id)->version, 1) << "moved before nimbus.supervisor.timeout.secs";
  std::vector<std::string> alive;
  for (const char* s : {"sup-1", "sup-2", "sup-3"}) {
    if (s != victim) alive.push_back(s);
  }
  advance_with_heartbeats(NimbusOptions().supervisor_timeout.count() + 1000, alive, *id);
  nimbus_->trigger();
  ASSERT_TRUE(eventually([&] {
    auto a = assignment(*id);
    return a && a->version >= 2;
  })) << "assignment not rewritten after "
      << victim << " left";
  const auto after = slots_by_executor(*assignment(*id));
  int moved = 0;
  for (const auto& [e, slot] : before) {
    if (slot.first == victim) {
      EXPECT_NE(after.at(e).first, victim) << e;
      ++moved;
    } else {
      EXPECT_EQ(after.at(e), slot) << e << " was healthy and must stay put";
    }
  }
  EXPECT_GT(moved, 0);
}

TEST_F(NimbusServiceTest, DeadWorkerHeartbeatReschedulesOnlyItsExecutors) {
  // This test's nimbus treats a worker without a heartbeat as dead quickly.
  stop_nimbus();
  start_with_short_worker_timeouts_ = true;
  start_nimbus();
  auto s1 = add_supervisor(supervisor_info("sup-1", "r1", 1024, 400, {6700, 6701}));
  auto s2 = add_supervisor(supervisor_info("sup-2", "r1", 1024, 400, {6700, 6701}));
  thrift::TopologyStructure s;
  s.name = "wc";
  s.components.push_back(component("words", true, 4, {"w"}));
  s.components.back().resources.onheap_mb = 200;
  auto id = submit("wc", s);
  ASSERT_TRUE(id) << id.status().to_string();
  ASSERT_TRUE(eventually([&] { return assignment(*id).has_value(); }));
  const auto before = slots_by_executor(*assignment(*id));
  std::set<std::pair<std::string, int>> workers;
  for (const auto& [e, slot] : before) workers.insert(slot);
  ASSERT_GE(workers.size(), 2u);
  const auto dead = *workers.begin();
  // Supervisors report every assigned worker but `dead`.
  auto beat = [&] {
    std::set<std::pair<std::string, int>> current;
    for (const auto& [e, slot] : slots_by_executor(*assignment(*id))) current.insert(slot);
    for (const std::string sup : {"sup-1", "sup-2"}) {
      thrift::SupervisorHeartbeat hb;
      hb.info = supervisor_info(sup, "r1", 1024, 400, {6700, 6701});
      for (const auto& w : current) {
        if (w == dead || w.first != sup) continue;
        thrift::WorkerHeartbeat wb;
        wb.topology_id = *id;
        wb.slot.node_id = w.first;
        wb.slot.port = w.second;
        hb.workers.push_back(wb);
      }
      EXPECT_TRUE(client_->supervisor_heartbeat(hb));
    }
  };
  ASSERT_TRUE(eventually([&] {
    beat();
    auto a = assignment(*id);
    return a && a->version >= 2;
  }));
  const auto after = slots_by_executor(*assignment(*id));
  for (const auto& [e, slot] : before) {
    if (slot == dead) {
      EXPECT_NE(after.at(e), dead) << e;
    } else {
      EXPECT_EQ(after.at(e), slot) << e << " ran in a live worker and must stay put";
    }
  }
}

// A heartbeat of every worker `assigned` places topology `id` in, each up
// for `uptime_secs`.
std::vector<thrift::WorkerHeartbeat> worker_beats(const std::string& id,
                                                  const thrift::Assignment& assigned,
                                                  std::int64_t uptime_secs = 0) {
  std::set<std::pair<std::string, int>> workers;
  for (const auto& e : assigned.executors) workers.insert({e.slot.node_id, e.slot.port});
  std::vector<thrift::WorkerHeartbeat> out;
  for (const auto& [node, port] : workers) {
    thrift::WorkerHeartbeat w;
    w.topology_id = id;
    w.slot.node_id = node;
    w.slot.port = port;
    w.uptime_secs = uptime_secs;
    out.push_back(std::move(w));
  }
  return out;
}

TEST_F(NimbusServiceTest, SubmitWaitWaitsForWorkerHeartbeatsWhereSupervisorsReportThem) {
  auto s1 = add_supervisor(supervisor_info("sup-1", "r1"));
  auto id = submit("wc");
  ASSERT_TRUE(id);
  ASSERT_TRUE(eventually([&] { return assignment(*id).has_value(); }));
  // A supervisor that reports no workers yet: the executors are not running.
  thrift::SupervisorHeartbeat hb;
  hb.info = supervisor_info("sup-1", "r1");
  ASSERT_TRUE(client_->supervisor_heartbeat(hb));
  Status waiting = wait_until_running(*client_, *id, std::chrono::milliseconds(300));
  ASSERT_FALSE(waiting);
  EXPECT_EQ(waiting.code(), ErrorCode::kTimeout);
  EXPECT_NE(waiting.message().find("7 executors wait for their worker's first heartbeat"),
            std::string::npos)
      << waiting.message();
  // Now it reports every assigned worker.
  hb.workers = worker_beats(*id, *assignment(*id));
  ASSERT_TRUE(client_->supervisor_heartbeat(hb));
  Status running = wait_until_running(*client_, *id, std::chrono::seconds(60));
  EXPECT_TRUE(running) << running.to_string();
}

// An executor's uptime is its worker process's: a worker restarted in place
// (a crash, a rebalance that changes its executors) starts again from 0.
TEST_F(NimbusServiceTest, ExecutorUptimeFollowsItsWorkersRestarts) {
  auto s1 = add_supervisor(supervisor_info("sup-1", "r1"));
  auto id = submit("wc");
  ASSERT_TRUE(id);
  ASSERT_TRUE(eventually([&] { return assignment(*id).has_value(); }));
  const thrift::Assignment assigned = *assignment(*id);
  auto beat = [&](std::int64_t uptime_secs) {
    thrift::SupervisorHeartbeat hb;
    hb.info = supervisor_info("sup-1", "r1");
    hb.workers = worker_beats(*id, assigned, uptime_secs);
    return client_->supervisor_heartbeat(hb);
  };
  auto uptimes = [&] {
    std::vector<std::int64_t> out;
    auto info = client_->topology_info(*id);
    if (info) {
      for (const auto& e : info->executors) out.push_back(e.uptime_secs);
    }
    return out;
  };
  ASSERT_TRUE(beat(3600));
  for (std::int64_t u : uptimes()) EXPECT_GE(u, 3600);
  ASSERT_TRUE(beat(2));  // restarted
  const auto after = uptimes();
  ASSERT_FALSE(after.empty());
  for (std::int64_t u : after) EXPECT_LT(u, 3600);
}

TEST_F(NimbusServiceTest, UnknownComponentInInputIsRejected) {
  auto s = word_count_structure();
  s.components[0].inputs[0].component = "splitter";
  auto id = submit("wc", s);
  ASSERT_FALSE(id);
  EXPECT_EQ(id.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(id.status().message().find("component 'count' reads from unknown component 'splitter'"),
            std::string::npos)
      << id.status().message();
}

TEST_F(NimbusServiceTest, FieldsGroupingOnUndeclaredFieldIsRejected) {
  auto s = word_count_structure();
  s.components[0].inputs[0].grouping.fields = {"wrod"};
  auto id = submit("wc", s);
  ASSERT_FALSE(id);
  EXPECT_NE(id.status().message().find("by field 'wrod'"), std::string::npos)
      << id.status().message();
}

TEST_F(NimbusServiceTest, ResourceRequestNoNodeCanHoldIsRejected) {
  auto s1 = add_supervisor(supervisor_info("sup-1", "r1", 2048));
  auto s2 = add_supervisor(supervisor_info("sup-2", "r2", 1024));
  auto running = submit("small");
  ASSERT_TRUE(running);
  auto big = word_count_structure(4096);
  auto id = submit("big", big, {{"topology.worker.max.heap.size.mb", "8192"}});
  ASSERT_FALSE(id);
  EXPECT_EQ(id.code(), ErrorCode::kInvalidArgument);
  const std::string m = id.status().message();
  EXPECT_NE(m.find("component 'count' asks 4096 MB per executor"), std::string::npos) << m;
  EXPECT_NE(m.find("the largest free node has"), std::string::npos) << m;
  EXPECT_NE(m.find("(sup-"), std::string::npos) << m;
  EXPECT_NE(m.find("no node has more than 2048 MB"), std::string::npos) << m;
  // What was running is untouched.
  auto cluster = client_->cluster_info();
  ASSERT_TRUE(cluster);
  ASSERT_EQ(cluster->topologies.size(), 1u);
  EXPECT_EQ(cluster->topologies[0].name, "small");
}

TEST_F(NimbusServiceTest, TopologyThatDoesNotFitNowIsUnschedulableWithReason) {
  auto s1 = add_supervisor(supervisor_info("sup-1", "r1", 1024, 400, {6700}));
  thrift::TopologyStructure s;
  s.name = "wide";
  s.components.push_back(component("words", true, 12, {"w"}));
  auto id = submit("wide", s);
  ASSERT_TRUE(id) << id.status().to_string();
  ASSERT_TRUE(eventually([&] {
    auto r = record(*id);
    return r && r->status == thrift::TopologyStatus::UNSCHEDULABLE;
  }));
  EXPECT_FALSE(record(*id)->status_reason.empty());
  EXPECT_FALSE(assignment(*id).has_value()) << "never half placed";
  // A larger node arrives (12 executors need 3 workers of 768 MB heap): it fits now.
  auto s2 = add_supervisor(supervisor_info("sup-2", "r1", 4096, 400, {6700, 6701, 6702}));
  ASSERT_TRUE(eventually([&] {
    auto r = record(*id);
    return r && r->status == thrift::TopologyStatus::ACTIVE && assignment(*id).has_value();
  }));
}

TEST_F(NimbusServiceTest, CorruptUploadIsRejected) {
  auto session = client_->begin_upload("code-x");
  ASSERT_TRUE(session);
  ASSERT_TRUE(client_->upload_chunk(*session, "abcdef"));
  auto done = client_->finish_upload(*session, 6, Sha256::hex_of("abcdeF"));
  ASSERT_FALSE(done);
  EXPECT_EQ(done.code(), ErrorCode::kCorruption);
  EXPECT_NE(done.status().message().find("code-x"), std::string::npos) << done.status().message();
  auto id = client_->submit_topology("wc", word_count_structure(), config(), "code-x");
  ASSERT_FALSE(id);
  EXPECT_EQ(id.code(), ErrorCode::kNotFound);
  EXPECT_NE(id.status().message().find("code blob 'code-x' was never uploaded"), std::string::npos);
}

TEST_F(NimbusServiceTest, TruncatedUploadIsRejected) {
  const std::string bytes(100, 'x');
  auto session = client_->begin_upload("code-y");
  ASSERT_TRUE(session);
  ASSERT_TRUE(client_->upload_chunk(*session, bytes.substr(0, 60)));
  auto done = client_->finish_upload(*session, 100, Sha256::hex_of(bytes));
  ASSERT_FALSE(done);
  EXPECT_EQ(done.code(), ErrorCode::kCorruption);
  EXPECT_FALSE(blobs_->info("code-y"));
}

// One connection carries any number of bytes: Thrift counted every byte a
// server connection read against its 100 MiB message limit and closed the
// connection past it (a worker's checkpoint uploads failed every ~100 MB).
// Then each blob downloads whole over the same connection.
TEST_F(NimbusServiceTest, OneConnectionUploadsAndDownloadsWellPast100MiB) {
  const std::string bytes(40 << 20, 'x');
  for (const char* key : {"big-1", "big-2", "big-3", "big-4"}) {
    auto up = client_->upload_blob(key, bytes);
    ASSERT_TRUE(up) << key << ": " << up.status().to_string();
    EXPECT_EQ(up->size, static_cast<std::int64_t>(bytes.size()));
  }
  for (const char* key : {"big-1", "big-2", "big-3", "big-4"}) {
    auto down = client_->download_blob(key);
    ASSERT_TRUE(down) << key << ": " << down.status().to_string();
    EXPECT_EQ(down->size(), bytes.size());
  }
}

// A connection that had answered and then ends is said to have ended, not
// blamed on TLS or the address (the advice for a first connection).
TEST_F(NimbusServiceTest, AConnectionThatEndsAfterAnsweringIsSaidToHaveEnded) {
  ASSERT_TRUE(client_->cluster_info());
  server_->stop();
  auto after = client_->cluster_info();
  ASSERT_FALSE(after);
  EXPECT_EQ(after.code(), ErrorCode::kUnavailable);
  EXPECT_NE(after.status().message().find("which had answered, ended during the call"),
            std::string::npos)
      << after.status().message();
  EXPECT_EQ(after.status().message().find("TLS"), std::string::npos) << after.status().message();
  // Nimbus is gone: connecting again says so.
  EXPECT_NE(after.status().message().find("is rstorm-nimbus running?"), std::string::npos)
      << after.status().message();
}

TEST_F(NimbusServiceTest, MissingCodeBlobIsRejected) {
  auto id = client_->submit_topology("wc", word_count_structure(), config(), "never-uploaded");
  ASSERT_FALSE(id);
  EXPECT_EQ(id.code(), ErrorCode::kNotFound);
}

TEST_F(NimbusServiceTest, DuplicateNameIsRejectedAndTheFirstKeepsRunning) {
  auto s1 = add_supervisor(supervisor_info("sup-1", "r1"));
  auto first = submit("wc");
  ASSERT_TRUE(first);
  ASSERT_TRUE(eventually([&] { return assignment(*first).has_value(); }));
  const auto before = *assignment(*first);
  auto second = submit("wc");
  ASSERT_FALSE(second);
  EXPECT_EQ(second.code(), ErrorCode::kAlreadyExists);
  EXPECT_NE(second.status().message().find("'wc' already exists"), std::string::npos);
  EXPECT_EQ(record(*first)->status, thrift::TopologyStatus::ACTIVE);
  EXPECT_EQ(assignment(*first)->version, before.version);
}

// A name whose topology is killed but waiting out its kill's wait is still
// taken: the refusal says so and when it frees, not "kill it first".
TEST_F(NimbusServiceTest, NameOfAKilledTopologyIsRefusedUntilItIsRemoved) {
  auto s1 = add_supervisor(supervisor_info("sup-1", "r1"));
  auto first = submit("wc");
  ASSERT_TRUE(first);
  ASSERT_TRUE(client_->kill_topology("wc", 3600));
  auto second = submit("wc");
  ASSERT_FALSE(second);
  EXPECT_EQ(second.code(), ErrorCode::kAlreadyExists);
  EXPECT_NE(second.status().message().find("a topology named 'wc' (" + *first +
                                           ") is being killed: it is removed in "),
            std::string::npos)
      << second.status().message();
  EXPECT_EQ(second.status().message().find("kill it first"), std::string::npos)
      << second.status().message();
}

// Names nimbus refuses, each with the rule it breaks.
TEST_F(NimbusServiceTest, InvalidNamesAreRefusedNamingTheRule) {
  auto s1 = add_supervisor(supervisor_info("sup-1", "r1"));
  auto slash = submit("my topo/x");
  ASSERT_FALSE(slash);
  EXPECT_EQ(slash.code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(slash.status().message(),
            "topology name 'my topo/x' is invalid: use letters, digits, '-', '_' and '.'");
  auto long_name = submit(std::string(201, 'z'));
  ASSERT_FALSE(long_name);
  EXPECT_NE(long_name.status().message().find("it has 201 characters, at most 200 are allowed"),
            std::string::npos)
      << long_name.status().message();
  EXPECT_TRUE(submit(std::string(200, 'z')));
}

TEST_F(NimbusServiceTest, KillOfUnknownTopologyIsNotFound) {
  auto s = client_->kill_topology("nope", 0);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.code(), ErrorCode::kNotFound);
  EXPECT_NE(s.message().find("topology 'nope' is not running"), std::string::npos) << s.message();
}

TEST_F(NimbusServiceTest, ActivateAndDeactivateSetTheRecordStatusWorkersWatch) {
  auto s1 = add_supervisor(supervisor_info("sup-1", "r1"));
  auto id = submit("wc");
  ASSERT_TRUE(id);
  ASSERT_TRUE(client_->deactivate("wc"));
  EXPECT_EQ(record(*id)->status, thrift::TopologyStatus::INACTIVE);
  ASSERT_TRUE(client_->activate("wc"));
  EXPECT_EQ(record(*id)->status, thrift::TopologyStatus::ACTIVE);
  ASSERT_TRUE(client_->kill_topology("wc", 3600));
  auto s = client_->activate("wc");
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("cannot activate topology 'wc': it is KILLED"), std::string::npos)
      << s.message();
}

TEST_F(NimbusServiceTest, KillWithWaitKeepsTheAssignmentUntilTheWaitEnds) {
  auto s1 = add_supervisor(supervisor_info("sup-1", "r1"));
  auto id = submit("wc");
  ASSERT_TRUE(id);
  ASSERT_TRUE(eventually([&] { return assignment(*id).has_value(); }));
  ASSERT_TRUE(client_->kill_topology("wc", 3600));
  EXPECT_EQ(record(*id)->status, thrift::TopologyStatus::KILLED);
  const auto rounds = nimbus_->rounds();
  nimbus_->trigger();
  ASSERT_TRUE(eventually([&] { return nimbus_->rounds() > rounds + 1; }));
  EXPECT_TRUE(assignment(*id).has_value()) << "removed before the kill wait ended";
}

// As Storm: a kill without a wait waits the topology's message timeout,
// not nimbus's; nimbus's when the topology sets none.
TEST_F(NimbusServiceTest, KillWithoutAWaitWaitsTheTopologysMessageTimeout) {
  auto s1 = add_supervisor(supervisor_info("sup-1", "r1"));
  auto own = submit("own", word_count_structure(), {{"topology.message.timeout.secs", "100"}});
  ASSERT_TRUE(own) << own.status().to_string();
  auto plain = submit("plain");
  ASSERT_TRUE(plain) << plain.status().to_string();
  ASSERT_TRUE(client_->kill_topology("own", std::nullopt));
  ASSERT_TRUE(client_->kill_topology("plain", std::nullopt));
  EXPECT_EQ(record(*own)->kill_wait_secs, 100);
  EXPECT_EQ(record(*own)->status_reason, "killed; assignment removed after 100 s");
  EXPECT_EQ(record(*plain)->kill_wait_secs, NimbusOptions().default_kill_wait_secs);
}

TEST_F(NimbusServiceTest, RebalanceChangesExecutorsAndBumpsTheAssignment) {
  auto s1 = add_supervisor(supervisor_info("sup-1", "r1"));
  auto s = word_count_structure();
  s.components[1].num_tasks = 6;  // split: 3 executors, 6 tasks
  auto id = submit("wc", s);
  ASSERT_TRUE(id);
  ASSERT_TRUE(eventually([&] { return assignment(*id).has_value(); }));
  ASSERT_TRUE(client_->deactivate("wc"));
  thrift::RebalanceOptions options;
  options.__set_num_executors({{"split", 6}});
  options.__set_wait_secs(0);
  const auto version = assignment(*id)->version;
  ASSERT_TRUE(client_->rebalance("wc", options));
  // A deactivated topology stays deactivated through a rebalance.
  ASSERT_TRUE(eventually([&] {
    auto a = assignment(*id);
    auto r = record(*id);
    return a && a->executors.size() == 10u && r && r->status == thrift::TopologyStatus::INACTIVE;
  }));
  EXPECT_EQ(record(*id)->component_executors.at("split"), 6);
  EXPECT_EQ(assignment(*id)->version, version + 1);  // replaced, never removed
  options.__set_num_executors({{"split", 7}});
  auto too_many = client_->rebalance("wc", options);
  ASSERT_FALSE(too_many);
  EXPECT_NE(too_many.message().find("component 'split' has 6 tasks"), std::string::npos)
      << too_many.message();
}

// A whole cluster restarting brings nimbus up before the supervisors: while
// none is registered, a placed topology keeps its assignment and status
// rather than being declared unschedulable; once one registers it is placed
// where it was.
TEST_F(NimbusServiceTest, PlacedTopologyWaitsForTheFirstSupervisorWithoutBecomingUnschedulable) {
  auto s1 = add_supervisor(supervisor_info("sup-1", "r1"));
  auto id = submit("wc");
  ASSERT_TRUE(id) << id.status().to_string();
  ASSERT_TRUE(eventually([&] { return assignment(*id).has_value(); }));
  const auto before = *assignment(*id);
  s1.reset();  // its session ends: no supervisor at all
  const auto rounds = nimbus_->rounds();
  nimbus_->trigger();
  ASSERT_TRUE(eventually([&] { return nimbus_->rounds() > rounds + 2; }));
  EXPECT_EQ(record(*id)->status, thrift::TopologyStatus::ACTIVE) << record(*id)->status_reason;
  ASSERT_TRUE(assignment(*id).has_value());
  EXPECT_EQ(assignment(*id)->version, before.version);
  s1 = add_supervisor(supervisor_info("sup-1", "r1"));
  const auto again = nimbus_->rounds();
  nimbus_->trigger();
  ASSERT_TRUE(eventually([&] { return nimbus_->rounds() > again + 1; }));
  EXPECT_EQ(record(*id)->status, thrift::TopologyStatus::ACTIVE);
  EXPECT_EQ(assignment(*id)->executors, before.executors);
  // One never placed still says why it is not.
  auto s = word_count_structure();
  s.name = "late";
  s1.reset();
  auto late = submit("late", s);
  ASSERT_TRUE(late) << late.status().to_string();
  ASSERT_TRUE(eventually([&] {
    auto r = record(*late);
    return r && r->status == thrift::TopologyStatus::UNSCHEDULABLE;
  }));
}

// A whole cluster restarting: the new leader sees some supervisors register
// before another. A topology that also runs on the late one keeps its
// assignment while that one has not registered (up to
// nimbus.supervisor.timeout.secs), rather than being moved off it and then
// placed again; one this leader saw leave is moved at once (the test above).
TEST_F(NimbusClockTest, NewLeaderWaitsForASupervisorItHasNotSeenBeforeMovingItsExecutors) {
  std::map<std::string, std::unique_ptr<CoordinationStore>> sups;
  const std::map<std::string, double> memory{{"sup-1", 512}, {"sup-2", 512}, {"sup-3", 1024}};
  for (const auto& [name, mb] : memory) {
    sups[name] = add_supervisor(supervisor_info(name, "r1", mb, 400, {6700}));
  }
  auto id = submit("wc");
  ASSERT_TRUE(id) << id.status().to_string();
  ASSERT_TRUE(eventually([&] { return assignment(*id).has_value(); }));
  const auto before = *assignment(*id);
  std::set<std::string> used;
  for (const auto& e : before.executors) used.insert(e.slot.node_id);
  ASSERT_GE(used.size(), 2u);
  const std::string late = *used.begin();
  // Nimbus restarts; `late` is not back yet when it leads again.
  client_.reset();
  stop_nimbus();
  sups[late].reset();
  start_nimbus();
  const auto rounds = nimbus_->rounds();
  nimbus_->trigger();
  ASSERT_TRUE(eventually([&] { return nimbus_->rounds() > rounds + 2; }));
  EXPECT_EQ(assignment(*id)->version, before.version) << late << "'s executors moved";
  EXPECT_EQ(record(*id)->status, thrift::TopologyStatus::ACTIVE) << record(*id)->status_reason;
  sups[late] = add_supervisor(supervisor_info(late, "r1", memory.at(late), 400, {6700}));
  const auto again = nimbus_->rounds();
  nimbus_->trigger();
  ASSERT_TRUE(eventually([&] { return nimbus_->rounds() > again + 1; }));
  EXPECT_EQ(assignment(*id)->executors, before.executors);
  EXPECT_EQ(assignment(*id)->version, before.version);
  // Seen by this leader and gone again: moved once nimbus.supervisor.timeout.secs
  // passed since it was last heard from.
  sups[late].reset();
  std::vector<std::string> alive;
  for (const auto& [name, sup] : sups) {
    if (name != late) alive.push_back(name);
  }
  advance_with_heartbeats(NimbusOptions().supervisor_timeout.count() + 1000, alive, *id);
  nimbus_->trigger();
  ASSERT_TRUE(eventually([&] { return assignment(*id)->version > before.version; }));
  const auto moved = assignment(*id);  // kept: a loop over a temporary's member dangles
  ASSERT_TRUE(moved);
  for (const auto& e : moved->executors) EXPECT_NE(e.slot.node_id, late);
}

// The scheduler's warnings (here CPU overcommitted: one node with 30 points
// for a topology that asks more) belong to the placement that put the
// executors there: a nimbus that leads after a restart, which keeps the
// assignment as it was, still shows them, and rewrites nothing for them.
TEST_F(NimbusServiceTest, PlacementWarningsSurviveANewLeaderThatKeepsTheAssignment) {
  auto sup = add_supervisor(supervisor_info("sup-1", "r1", 4096, 30, {6700, 6701}));
  auto id = submit("wc");
  ASSERT_TRUE(id) << id.status().to_string();
  ASSERT_TRUE(eventually([&] { return assignment(*id).has_value(); })) << record(*id)->status_reason;
  const auto before = client_->placement(*id);
  ASSERT_TRUE(before) << before.status().to_string();
  ASSERT_FALSE(before->warnings.empty());
  EXPECT_NE(before->warnings[0].find("overcommit"), std::string::npos) << before->warnings[0];
  EXPECT_NE(before->warnings[0].find(" on sup-1"), std::string::npos) << before->warnings[0];
  const std::int64_t version = assignment(*id)->version;

  client_.reset();
  stop_nimbus();
  start_nimbus();
  const auto rounds = nimbus_->rounds();
  nimbus_->trigger();
  ASSERT_TRUE(eventually([&] { return nimbus_->rounds() > rounds + 2; }));
  EXPECT_EQ(assignment(*id)->version, version);
  const auto after = client_->placement(*id);
  ASSERT_TRUE(after) << after.status().to_string();
  EXPECT_EQ(after->warnings, before->warnings);
}

// A topology waiting to be rebalanced, or killed with a wait, still runs its
// workers: their ports, and the memory and CPU they use, stay taken. One
// submitted meanwhile is placed around them (no port assigned twice, no
// memory counted free that a worker still holds).
TEST_F(NimbusServiceTest, WorkersWaitingForARebalanceOrAKillKeepTheirPortsAndMemory) {
  auto s1 = add_supervisor(supervisor_info("sup-1", "r1"));
  const std::map<std::string, std::string> one_worker{{"topology.worker.max.heap.size.mb", "4096"}};
  auto a = submit("a", word_count_structure(), one_worker);
  ASSERT_TRUE(a) << a.status().to_string();
  ASSERT_TRUE(eventually([&] { return assignment(*a).has_value(); }));
  std::set<int> ports_of_a;
  const auto assigned_a = assignment(*a);
  ASSERT_TRUE(assigned_a);
  for (const auto& e : assigned_a->executors) ports_of_a.insert(e.slot.port);
  thrift::RebalanceOptions options;
  options.__set_wait_secs(3600);
  ASSERT_TRUE(client_->rebalance("a", options));
  ASSERT_EQ(record(*a)->status, thrift::TopologyStatus::REBALANCING);

  auto b = submit("b", word_count_structure(), one_worker);
  ASSERT_TRUE(b) << b.status().to_string();
  ASSERT_TRUE(eventually([&] { return assignment(*b).has_value(); }))
      << thrift::to_string(record(*b)->status) << ": " << record(*b)->status_reason;
  const auto assigned_b = assignment(*b);
  ASSERT_TRUE(assigned_b);
  for (const auto& e : assigned_b->executors) {
    EXPECT_FALSE(ports_of_a.count(e.slot.port))
        << "port " << e.slot.port << " given to b while a's worker still runs on it";
  }
  auto used_on_sup1 = [&]() -> double {
    auto cluster = client_->cluster_info();
    if (!cluster) return -1;
    for (const auto& s : cluster->supervisors) {
      if (s.info.id == "sup-1") return s.used_memory_mb;
    }
    return -1;
  };
  auto assigned = [&](const std::string& id) -> double {
    auto cluster = client_->cluster_info();
    if (!cluster) return -1;
    for (const auto& t : cluster->topologies) {
      if (t.id == id) return t.assigned_memory_mb;
    }
    return -1;
  };
  ASSERT_GT(assigned(*a), 0);
  ASSERT_GT(assigned(*b), 0);
  EXPECT_TRUE(eventually([&] { return used_on_sup1() == assigned(*a) + assigned(*b); }))
      << "sup-1 uses " << used_on_sup1() << " MB; a holds " << assigned(*a) << ", b "
      << assigned(*b);

  // Killed with a wait, a's workers run on until it ends: still counted.
  ASSERT_TRUE(client_->kill_topology("a", 3600));
  const auto rounds = nimbus_->rounds();
  nimbus_->trigger();
  ASSERT_TRUE(eventually([&] { return nimbus_->rounds() > rounds + 1; }));
  EXPECT_EQ(used_on_sup1(), assigned(*a) + assigned(*b));
  EXPECT_EQ(record(*a)->status, thrift::TopologyStatus::KILLED);

  // A leader that did not place them (a restart, a failover) counts the same:
  // the workers' executors from the assignment, and each worker's acker.
  const double a_before = assigned(*a), b_before = assigned(*b);
  client_.reset();
  stop_nimbus();
  start_nimbus();
  const auto after_restart = nimbus_->rounds();
  nimbus_->trigger();
  ASSERT_TRUE(eventually([&] { return nimbus_->rounds() > after_restart + 1; }));
  EXPECT_EQ(record(*a)->status, thrift::TopologyStatus::KILLED);
  EXPECT_EQ(assigned(*a), a_before);
  EXPECT_EQ(assigned(*b), b_before);
  EXPECT_EQ(used_on_sup1(), a_before + b_before) << "sup-1 uses " << used_on_sup1() << " MB";
}

// Storm's `rebalance -r`: new resources per executor of a component, whose
// executors are then placed where the new amounts fit (here only on the
// empty supervisor); the structure keeps them for later rounds. Unknown
// components and negative amounts are refused naming them.
TEST_F(NimbusServiceTest, RebalanceWithNewResourcesPlacesTheComponentWhereTheyFit) {
  auto s1 = add_supervisor(supervisor_info("sup-1", "r1"));
  // Workers as large as a node: the executor below fits one.
  auto id = submit("wc", word_count_structure(), {{"topology.worker.max.heap.size.mb", "4096"}});
  ASSERT_TRUE(id);
  ASSERT_TRUE(eventually([&] { return assignment(*id).has_value(); }));
  const auto first = assignment(*id);
  for (const auto& e : first->executors) ASSERT_EQ(e.slot.node_id, "sup-1");
  auto s2 = add_supervisor(supervisor_info("sup-2", "r1"));
  thrift::RebalanceOptions options;
  options.__set_wait_secs(0);
  options.__set_resource_overrides({{"cnt", {{"cpu.pcore.percent", 50}}}});
  auto unknown = client_->rebalance("wc", options);
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.message().find("has no component 'cnt'"), std::string::npos)
      << unknown.message();
  options.__set_resource_overrides({{"count", {{"cpu.pcore.percent", -5}}}});
  auto negative = client_->rebalance("wc", options);
  ASSERT_FALSE(negative);
  EXPECT_NE(negative.message().find("component 'count': cpu.pcore.percent -5"), std::string::npos)
      << negative.message();
  EXPECT_EQ(record(*id)->status, thrift::TopologyStatus::ACTIVE);
  // One count executor that needs 3900 of a node's 4096 MB (its worker's
  // acker 128 more): only the empty sup-2 can hold it.
  options.__set_num_executors({{"count", 1}});
  options.__set_resource_overrides(
      {{"count", {{"onheap.memory.mb", 3900}, {"cpu.pcore.percent", 50}, {"gpu.count", 0}}}});
  const auto version = assignment(*id)->version;
  ASSERT_TRUE(client_->rebalance("wc", options));
  ASSERT_TRUE(eventually([&] {
    auto a = assignment(*id);
    return a && a->version > version && record(*id)->status == thrift::TopologyStatus::ACTIVE;
  })) << thrift::to_string(record(*id)->status)
      << ": " << record(*id)->status_reason;
  const auto moved = assignment(*id);
  for (const auto& e : moved->executors) {
    if (e.executor.component != "count") continue;
    EXPECT_EQ(e.slot.node_id, "sup-2");
    EXPECT_EQ(e.resources.onheap_mb, 3900);
    EXPECT_EQ(e.resources.cpu_pcore_percent, 50);
  }
  auto info = client_->topology_info(*id);
  ASSERT_TRUE(info) << info.status().to_string();
  for (const auto& c : info->structure.components) {
    if (c.id != "count") continue;
    EXPECT_EQ(c.resources.onheap_mb, 3900);
    EXPECT_EQ(c.resources.generic.at("gpu.count"), 0);
  }
}

// A deactivated topology that stops fitting (here: a rebalance asks more
// memory than any node has) stays deactivated: UNSCHEDULABLE with its
// workers' spouts paused (supervisors read resume_status), and INACTIVE
// again once it fits. activate/deactivate meanwhile set what it is once
// placed. Before, it came back ACTIVE, and its running workers' spouts
// resumed as soon as it became unschedulable.
TEST_F(NimbusServiceTest, ADeactivatedTopologyThatStopsFittingStaysDeactivated) {
  using thrift::TopologyStatus;
  auto s1 = add_supervisor(supervisor_info("sup-1", "r1"));
  auto id = submit("wc");
  ASSERT_TRUE(id) << id.status().to_string();
  ASSERT_TRUE(eventually([&] { return assignment(*id).has_value(); }));
  ASSERT_TRUE(client_->deactivate("wc"));
  auto rebalance_count = [&](double mb) {
    thrift::RebalanceOptions options;
    options.__set_wait_secs(0);
    options.__set_resource_overrides({{"count", {{"onheap.memory.mb", mb}}}});
    return client_->rebalance("wc", options);
  };
  auto becomes = [&](TopologyStatus::type status) {
    return eventually([&] {
      auto r = record(*id);
      return r && r->status == status;
    });
  };
  auto now = [&] {
    auto r = record(*id);
    return r ? thrift::to_string(r->status) + ": " + r->status_reason : std::string("gone");
  };

  ASSERT_TRUE(rebalance_count(100000));
  ASSERT_TRUE(becomes(TopologyStatus::UNSCHEDULABLE)) << now();
  EXPECT_EQ(record(*id)->resume_status, TopologyStatus::INACTIVE);
  auto info = client_->topology_info("wc");
  ASSERT_TRUE(info) << info.status().to_string();
  EXPECT_NE(info->summary.status_reason.find("deactivated: its spouts stay paused"),
            std::string::npos)
      << info->summary.status_reason;
  ASSERT_TRUE(rebalance_count(128));
  EXPECT_TRUE(becomes(TopologyStatus::INACTIVE)) << now();

  // Activated while it does not fit: ACTIVE once it does.
  ASSERT_TRUE(rebalance_count(100000));
  ASSERT_TRUE(becomes(TopologyStatus::UNSCHEDULABLE)) << now();
  Status activated = client_->activate("wc");
  ASSERT_TRUE(activated.is_ok()) << activated.to_string();
  EXPECT_EQ(record(*id)->status, TopologyStatus::UNSCHEDULABLE);
  EXPECT_EQ(record(*id)->resume_status, TopologyStatus::ACTIVE);
  ASSERT_TRUE(rebalance_count(128));
  EXPECT_TRUE(becomes(TopologyStatus::ACTIVE)) << now();
}

}  // namespace
}  // namespace rstorm::nimbus::testing

namespace rstorm::nimbus::testing {
namespace {


// A rebalance waiting out its -w is kept in the topology's record: a nimbus
// that leads before the wait ends (a restart, a failover) applies it at the
// deadline, with its options, and returns the topology to what it was
// (here deactivated). Before, a new leader finished it at once with no
// options: nothing changed, and the topology came back ACTIVE.
TEST_F(NimbusClockTest, ARebalanceWaitingOutItsWaitSurvivesANewLeader) {
  using thrift::TopologyStatus;
  auto s1 = add_supervisor(supervisor_info("sup-1", "r1"));
  auto id = submit("wc");
  ASSERT_TRUE(id) << id.status().to_string();
  ASSERT_TRUE(eventually([&] { return assignment(*id).has_value(); }));
  ASSERT_TRUE(client_->deactivate("wc"));
  thrift::RebalanceOptions options;
  // Shorter than nimbus.supervisor.timeout.secs (60): the clock's move
  // below leaves sup-1 alive.
  options.__set_wait_secs(30);
  options.__set_num_executors({{"split", 1}});
  ASSERT_TRUE(client_->rebalance("wc", options));
  ASSERT_EQ(record(*id)->status, TopologyStatus::REBALANCING);

  client_.reset();
  stop_nimbus();
  start_nimbus();
  auto rounds = nimbus_->rounds();
  nimbus_->trigger();
  ASSERT_TRUE(eventually([&] { return nimbus_->rounds() > rounds + 2; }));
  EXPECT_EQ(record(*id)->status, TopologyStatus::REBALANCING) << "the wait is not over";
  EXPECT_EQ(record(*id)->component_executors.at("split"), 3);

  now_ms_ += 31 * 1000;
  nimbus_->trigger();
  ASSERT_TRUE(eventually([&] {
    auto r = record(*id);
    return r && r->status != TopologyStatus::REBALANCING;
  }));
  auto done = record(*id);
  EXPECT_EQ(done->status, TopologyStatus::INACTIVE) << done->status_reason;
  EXPECT_EQ(done->component_executors.at("split"), 1);
  EXPECT_FALSE(done->__isset.rebalance);
  EXPECT_TRUE(eventually([&] {
    auto a = assignment(*id);
    if (!a) return false;
    int splits = 0;
    for (const auto& e : a->executors) splits += e.executor.component == "split";
    return splits == 1;
  }));
}

// A kill's wait, too, ends when it was asked to, whichever nimbus leads.
TEST_F(NimbusClockTest, AKillWaitEndsWhenAskedUnderANewLeader) {
  auto s1 = add_supervisor(supervisor_info("sup-1", "r1"));
  auto id = submit("wc");
  ASSERT_TRUE(id) << id.status().to_string();
  ASSERT_TRUE(eventually([&] { return assignment(*id).has_value(); }));
  ASSERT_TRUE(client_->kill_topology("wc", 30));
  now_ms_ += 20 * 1000;
  client_.reset();
  stop_nimbus();
  start_nimbus();
  auto rounds = nimbus_->rounds();
  nimbus_->trigger();
  ASSERT_TRUE(eventually([&] { return nimbus_->rounds() > rounds + 2; }));
  ASSERT_TRUE(record(*id).has_value()) << "10 s of the wait are left";
  EXPECT_EQ(record(*id)->status, thrift::TopologyStatus::KILLED);
  now_ms_ += 11 * 1000;
  nimbus_->trigger();
  EXPECT_TRUE(eventually([&] { return !record(*id) && !assignment(*id); }))
      << "removed 30 s after the kill, not 30 s after the new leader's first round";
}

// Two nimbuses configured (topology.min.replication.count = 2), no wait limit:
// a topology is scheduled only once a second nimbus holds its code.
class ReplicationTest : public NimbusFixture {
 protected:
  NimbusOptions options() override {
    NimbusOptions o = NimbusFixture::options();
    o.min_replication = 2;
    o.max_replication_wait = std::chrono::milliseconds(-1);
    return o;
  }
};

TEST_F(ReplicationTest, TopologyWaitsUntilEnoughNimbusesHoldItsCode) {
  auto s1 = add_supervisor(supervisor_info("sup-1", "r1"));
  auto id = submit("wc");
  ASSERT_TRUE(id) << id.status().to_string();
  // The leader registered itself as holding the code.
  auto holders = store_->children(paths_.code_replicas(*id));
  ASSERT_TRUE(holders) << holders.status().to_string();
  ASSERT_EQ(holders->size(), 1u);
  EXPECT_EQ((*holders)[0], "127.0.0.1:" + std::to_string(server_->port()));

  // Several full rounds later: still not assigned.
  const std::uint64_t start = nimbus_->rounds();
  ASSERT_TRUE(eventually([&] { return nimbus_->rounds() >= start + 3; }));
  EXPECT_FALSE(assignment(*id).has_value());
  // Its record says why (describe, list, submit --wait show it).
  EXPECT_NE(record(*id)->status_reason.find("waiting until 2 nimbuses hold its code "
                                            "(topology.min.replication.count)"),
            std::string::npos)
      << record(*id)->status_reason;

  // A second nimbus registers its copy (as a standby does after copying the
  // blobs): the topology is scheduled.
  auto standby = service_->connect();
  ASSERT_TRUE(standby->create(paths_.code_replicas(*id) + "/127.0.0.1:1", "",
                              CreateMode::kEphemeral));
  EXPECT_TRUE(eventually([&] { return assignment(*id).has_value(); }));
  EXPECT_TRUE(eventually([&] { return record(*id)->status_reason.empty(); }))
      << record(*id)->status_reason;

  ASSERT_TRUE(client_->kill_topology("wc", 0));
  ASSERT_TRUE(eventually([&] { return !record(*id); }));
  auto left = store_->exists(paths_.code_replicas(*id));
  ASSERT_TRUE(left);
  EXPECT_FALSE(*left) << "the replica registrations go with the topology";
}

namespace checkpoints {

thrift::CheckpointInfo checkpoint(std::int64_t id, std::int64_t epoch, int tasks) {
  thrift::CheckpointInfo c;
  c.id = id;
  c.__set_epoch(epoch);
  c.__set_tasks(tasks);
  c.__set_started_ms(1000 * id);
  c.__set_completed_ms(1000 * id + 50);
  c.__set_bytes(3 * tasks);
  return c;
}

}  // namespace checkpoints

// The nimbus checkpoint store's server side: a checkpoint is recorded only
// when nimbus holds all its parts; the newest `retained` are kept with their
// parts, older ones (and those of an older epoch) are removed, while parts of
// a checkpoint still being taken stay; a checkpoint of a replaced epoch is
// refused; a kill removes them all.
TEST_F(NimbusServiceTest, CheckpointsAreRecordedWithTheirPartsAndCollected) {
  using checkpoints::checkpoint;
  add_supervisor(supervisor_info("sup-1", "r1"));
  auto id = submit("wc");
  ASSERT_TRUE(id) << id.status().to_string();
  auto put_parts = [&](std::int64_t c, std::int64_t epoch, std::vector<int> tasks) {
    for (int t : tasks) {
      ASSERT_TRUE(client_->upload_blob(checkpoint_part_key(*id, c, epoch, t), "part"));
    }
  };
  auto state = client_->checkpoints("wc");
  ASSERT_TRUE(state) << state.status().to_string();
  EXPECT_EQ(state->epoch, 0);
  EXPECT_TRUE(state->complete.empty());

  put_parts(1, 0, {1, 2});
  auto missing = client_->complete_checkpoint(*id, checkpoint(1, 0, 3), 2);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(missing.status().message().find("checkpoint 1 of topology '" + *id +
                                            "' (recovery epoch 0) has 3 parts, but nimbus "
                                            "holds 2"),
            std::string::npos)
      << missing.status().to_string();
  put_parts(1, 0, {3});
  auto one = client_->complete_checkpoint(*id, checkpoint(1, 0, 3), 2);
  ASSERT_TRUE(one) << one.status().to_string();
  ASSERT_EQ(one->complete.size(), 1u);
  EXPECT_EQ(one->complete[0].part_tasks, (std::vector<std::int32_t>{1, 2, 3}));

  put_parts(2, 0, {1, 2, 3});
  ASSERT_TRUE(client_->complete_checkpoint(*id, checkpoint(2, 0, 3), 2));
  put_parts(4, 0, {1});  // checkpoint 4 is being taken
  put_parts(3, 0, {1, 2, 3});
  auto three = client_->complete_checkpoint(*id, checkpoint(3, 0, 3), 2);
  ASSERT_TRUE(three) << three.status().to_string();
  ASSERT_EQ(three->complete.size(), 2u);
  EXPECT_EQ(three->complete[0].id, 2);
  EXPECT_EQ(three->complete[1].id, 3);
  auto parts = [&] {
    std::set<std::string> out;
    auto keys = blobs_->list();
    EXPECT_TRUE(keys) << keys.status().to_string();
    if (!keys) return out;
    for (const auto& key : keys.value()) {
      if (key.starts_with(checkpoint_key_prefix(*id))) out.insert(key);
    }
    return out;
  };
  std::set<std::string> expected;
  for (int c : {2, 3}) {
    for (int t : {1, 2, 3}) expected.insert(checkpoint_part_key(*id, c, 0, t));
  }
  expected.insert(checkpoint_part_key(*id, 4, 0, 1));
  EXPECT_EQ(parts(), expected) << "checkpoint 1 removed, 2 and 3 kept, 4 still being taken";

  // A worker restarts: the epoch moves on; the old epoch cannot record any more.
  auto epoch = client_->advance_checkpoint_epoch(*id);
  ASSERT_TRUE(epoch) << epoch.status().to_string();
  EXPECT_EQ(*epoch, 1);
  // The workers of epoch 1 restore the newest checkpoint whose parts nimbus holds.
  auto moved = client_->checkpoints(*id);
  ASSERT_TRUE(moved) << moved.status().to_string();
  ASSERT_TRUE(moved->__isset.restore);
  EXPECT_EQ(moved->restore.id, 3);
  put_parts(4, 0, {2, 3});
  auto stale = client_->complete_checkpoint(*id, checkpoint(4, 0, 3), 2);
  ASSERT_FALSE(stale);
  EXPECT_NE(stale.status().message().find("is stale: the topology moved on to recovery epoch 1"),
            std::string::npos)
      << stale.status().to_string();
  put_parts(4, 1, {1, 2, 3});
  auto fresh = client_->complete_checkpoint(*id, checkpoint(4, 1, 3), 2);
  ASSERT_TRUE(fresh) << fresh.status().to_string();
  EXPECT_EQ(fresh->epoch, 1);
  expected.clear();
  for (int t : {1, 2, 3}) {
    expected.insert(checkpoint_part_key(*id, 3, 0, t));
    expected.insert(checkpoint_part_key(*id, 4, 1, t));
  }
  EXPECT_EQ(parts(), expected) << "the old epoch's unfinished checkpoint 4 is removed";

  // describe shows them.
  auto info = client_->topology_info("wc");
  ASSERT_TRUE(info) << info.status().to_string();
  ASSERT_TRUE(info->__isset.checkpoints);
  EXPECT_EQ(info->checkpoints.complete.back().id, 4);

  ASSERT_TRUE(client_->kill_topology("wc", 0));
  EXPECT_TRUE(eventually([&] {
    auto blobs = blobs_->list();
    return blobs && blobs->empty();
  })) << "checkpoint parts are freed on kill";
  EXPECT_FALSE(client_->checkpoints(*id));
}

// A store in front of the fixture's session that runs a hook once, in the
// caller's thread, just before the first set() of a path under `prefix`.
class InterposingStore final : public CoordinationStore {
 public:
  explicit InterposingStore(std::unique_ptr<CoordinationStore> inner) : inner_(std::move(inner)) {}

  void before_first_set(std::string prefix, std::function<void()> hook) {
    std::lock_guard lock(mutex_);
    prefix_ = std::move(prefix);
    hook_ = std::move(hook);
  }

  Result<std::string> create(std::string_view path, std::string_view data,
                             CreateMode mode) override {
    return inner_->create(path, data, mode);
  }
  Result<NodeData> get(std::string_view path, WatchCallback watch) override {
    return inner_->get(path, std::move(watch));
  }
  Result<std::int32_t> set(std::string_view path, std::string_view data,
                           std::int32_t expected_version) override {
    std::function<void()> hook;
    {
      std::lock_guard lock(mutex_);
      if (hook_ && path.starts_with(prefix_)) hook = std::exchange(hook_, nullptr);
    }
    if (hook) hook();
    return inner_->set(path, data, expected_version);
  }
  Status remove(std::string_view path, std::int32_t expected_version) override {
    return inner_->remove(path, expected_version);
  }
  Result<std::vector<std::string>> children(std::string_view path, WatchCallback watch) override {
    return inner_->children(path, std::move(watch));
  }
  Result<bool> exists(std::string_view path, WatchCallback watch) override {
    return inner_->exists(path, std::move(watch));
  }
  std::uint64_t add_session_listener(SessionCallback listener) override {
    return inner_->add_session_listener(std::move(listener));
  }
  void remove_session_listener(std::uint64_t id) override { inner_->remove_session_listener(id); }
  std::int64_t session_id() const override { return inner_->session_id(); }

 private:
  std::unique_ptr<CoordinationStore> inner_;
  std::mutex mutex_;
  std::string prefix_;
  std::function<void()> hook_;
};

class NimbusRaceTest : public NimbusFixture {
 protected:
  std::unique_ptr<CoordinationStore> connect_store() override {
    auto store = std::make_unique<InterposingStore>(service_->connect());
    interposer_ = store.get();
    return store;
  }
  InterposingStore* interposer_ = nullptr;
};

// A scheduling round reads every record, places, then writes back what it
// found (here: unschedulable, no supervisor being registered). A kill that
// lands between its read and its write is kept: the round's write was made
// over the version it read, and the topology is then removed. Before, the
// round wrote its stale copy over the kill and the topology ran on.
TEST_F(NimbusRaceTest, AKillDuringASchedulingRoundIsNotUndoneByIt) {
  const std::string name = "wc";
  std::promise<Status> killed;
  auto killed_status = killed.get_future();
  // The round that first sees the topology writes its record (submit creates
  // it; nothing else sets it before the kill); the kill comes just before.
  interposer_->before_first_set(paths_.topologies() + "/",
                                [&] { killed.set_value(nimbus_->kill(name, 0)); });
  auto id = submit(name);
  ASSERT_TRUE(id) << id.status().to_string();
  ASSERT_EQ(killed_status.wait_for(std::chrono::seconds(60)), std::future_status::ready);
  Status kill = killed_status.get();
  ASSERT_TRUE(kill.is_ok()) << kill.to_string();
  EXPECT_TRUE(eventually([&] { return !record(*id).has_value(); }))
      << "the killed topology is removed; it is "
      << (record(*id) ? thrift::to_string(record(*id)->status) : std::string("gone"));
  EXPECT_FALSE(client_->topology_info(name));
}

}  // namespace
}  // namespace rstorm::nimbus::testing
