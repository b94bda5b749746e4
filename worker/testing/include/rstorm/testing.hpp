// Testing topologies in-process, as Storm's Testing.completeTopology does:
// run a whole topology (its spouts fed with fixed tuples if you like) inside a
// unit test, with no service started, until every spout has finished and every
// tuple tree is complete, and get back every tuple each component emitted and
// how its tuples ended.
//
//   rstorm::testing::CompleteTopologyOptions options;
//   options.mocked_sources.add("numbers", {{1}, {2}, {3}});
//   auto run = rstorm::testing::complete_topology(topology, options);
//   ASSERT_TRUE(run.ok()) << run.status().message();
//   EXPECT_EQ(run->emitted("parity").size(), 3u);
//
// Link rstorm::testing (librstorm-testing); it runs the same executors, queues,
// groupings and acking as `rstorm local` and the workers.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rstorm/config.hpp"
#include "rstorm/status.hpp"
#include "rstorm/topology.hpp"
#include "rstorm/value.hpp"

namespace rstorm::testing {

// Fixed tuples that stand in for a spout's own: a mocked spout emits them in
// order, each reliable (its message id is its index), spread over the spout's
// tasks (task k of n emits tuples k, k + n, ...), and is finished once each one
// is acked or failed. A failed tuple is not replayed: it shows in failed().
class MockedSources {
 public:
  MockedSources& add(std::string spout, std::vector<Values> tuples) {
    return add(std::move(spout), std::string(kDefaultStream), std::move(tuples));
  }
  MockedSources& add(std::string spout, std::string stream, std::vector<Values> tuples) {
    auto& list = by_spout_[std::move(spout)];
    for (auto& t : tuples) list.emplace_back(stream, std::move(t));
    return *this;
  }
  // spout -> (stream, values) in the order given.
  const std::map<std::string, std::vector<std::pair<std::string, Values>>, std::less<>>& by_spout() const {
    return by_spout_;
  }

 private:
  std::map<std::string, std::vector<std::pair<std::string, Values>>, std::less<>> by_spout_;
};

struct CompleteTopologyOptions {
  // Spouts not named here run as they are, and must finish by themselves
  // (SpoutOutputCollector::finish), as a bounded source does.
  MockedSources mocked_sources;
  // The topology config (e.g. topology.message.timeout.secs), over the defaults.
  Config config;
  // The run fails if it has not completed by then.
  std::chrono::milliseconds timeout{60000};
};

// One tuple a component emitted.
struct EmittedTuple {
  std::string stream;
  Values values;
  int task = 0;  // the emitting task's id
  friend bool operator==(const EmittedTuple&, const EmittedTuple&) = default;
};

// What a completed run leaves: every tuple each component emitted, and the
// counters of its tuples. Emitted tuples are in emit order within each task,
// tasks in ascending id (tasks run in parallel, so that is the only order).
class CompletedTopology {
 public:
  // The values `component` emitted on `stream`.
  std::vector<Values> emitted(std::string_view component,
                              std::string_view stream = kDefaultStream) const;
  // Every tuple `component` emitted, any stream.
  const std::vector<EmittedTuple>& emitted_tuples(std::string_view component) const;
  // Spouts: trees completed (acked) or failed or timed out; bolts: inputs
  // acked or failed.
  std::uint64_t acked(std::string_view component) const;
  std::uint64_t failed(std::string_view component) const;
  // Bolts: inputs executed.
  std::uint64_t executed(std::string_view component) const;
  // What the component passed to report_error, and the exceptions its execute
  // or next_tuple threw, in order.
  const std::vector<std::string>& errors(std::string_view component) const;
  // A user metric (rstorm/metrics.hpp) of `component`, summed over its tasks:
  // a counter's or gauge's value, a histogram's number of observations; 0 when
  // the component registered no such metric.
  double metric(std::string_view component, std::string_view name) const;

  struct Counters {
    std::uint64_t acked = 0, failed = 0, executed = 0;
  };
  std::map<std::string, std::vector<EmittedTuple>, std::less<>> emitted_;
  std::map<std::string, Counters, std::less<>> counters_;
  std::map<std::string, std::vector<std::string>, std::less<>> errors_;
  std::map<std::pair<std::string, std::string>, double, std::less<>> metrics_;
};

// Runs `topology` in this process until every spout task has finished (mocked
// spouts: all their tuples acked or failed) and no tuple tree is in flight.
// Fails, naming what is wrong, when a mocked source names no spout of the
// topology, a component cannot start (its open/prepare threw), or the run does
// not complete within the timeout (then with what is still in flight).
api::Result<CompletedTopology> complete_topology(const Topology& topology,
                                                 const CompleteTopologyOptions& options = {});

}  // namespace rstorm::testing
