// Flow control, property-tested. Random topologies run to completion and the
// receive queues' memory stays within its bound:
//  - 1-2 spouts, 2-6 bolts in a random DAG, plus random back edges that close
//    cycles (bolt j emits on its own "back" stream, an earlier bolt i <= j
//    subscribes to it and acks those tuples without emitting anything, so
//    every tuple tree ends); every grouping but direct; parallelism 1-3 (and
//    sometimes one task more than executors); some bolts slow (1-200 us per
//    tuple); small queues (topology.executor.receive.buffer.size 64-512) and
//    batches (topology.transfer.batch.size 8-64); acking on (1-2 ackers) or
//    off; topology.max.spout.pending unset or small; topology.fuse.executors
//    on or off.
//  - Each spout task emits a fixed number of reliable messages and stops. The
//    test polls (bounded) until every message is acked at its spout exactly
//    once and every bolt executed exactly the number of tuples the shape
//    implies (computed per spout message from groupings, fan-outs and back
//    edges), then asserts exactly that, no fail, no duplicate.
//  - SingleProcess runs one TopologyRuntime (what LocalCluster runs).
//    AcrossWorkers splits the executors at random over 2-3 "workers" in this
//    process: one SlotRuntime + DataPlane + transport::Transport each, wired
//    like worker/process/worker_process.cpp, on 127.0.0.1 with OS-chosen
//    ports, so that cycles and ack paths cross real TCP connections.
//
// The memory bound (checked on ReceiveQueue::overflow_peak(), the most
// batches an executor's overflow held at once; see overflow_bound()):
//  - A queue's overflow only takes force_push / push_or_overflow batches. In
//    one process only two producers do that: an acker's completions to a spout
//    and an edge inside a cycle (TopologyPlan::never_wait); DataPlane fails
//    only happen for undeliverable envelopes, and the test asserts there are
//    none. So in one process every bolt that is on no cycle and every acker
//    must never overflow: bound 0.
//  - A spout executor receives one completion per tree, so its overflow holds
//    at most as many batches as it has trees pending: max.spout.pending x its
//    tasks, or (unset) every message it emits.
//  - A bolt on a cycle receives force-pushed tuples from its cycle: at most
//    the tuples of the trees in flight that reach it (max.spout.pending x spout
//    tasks x tuples per tree at that bolt), or (no max.spout.pending or acking
//    off: nothing else bounds a cycle) every tuple it executes in the run.
//  - Across workers, the network reader force-pushes every frame it reads
//    (TopologyRuntime::deliver_remote), one overflow batch per frame at most.
//    The executor is throttled at every peer on its first overflow
//    (DataPlane::deliver -> check_backpressure), after which its senders add
//    nothing new; what still arrives is what they had in flight. Per peer that
//    runs a producer of this executor: its data lane (frames while under
//    worker.transport.buffer.bytes, counted with the smallest frame the codec
//    makes, plus one frame per executor of that worker that passed the byte
//    check at the same moment), and the write in progress, which took a whole
//    lane: as much again. Plus the frames written to sockets and not yet
//    decoded, taken as measured (Σ frames_sent - Σ frames_received over all
//    transports, the peak the sampler saw every ~1 ms). And what senders push
//    while the backpressure frame travels back (the reader posts it after the
//    frames of its current read): on loopback that takes microseconds, in
//    which a peer's lane refills at most once more, so one more lane per peer.
//    That term and the sampled wire peak are estimates, not proofs: the replay
//    RSTORM_PROP_SEED=9464667533462220813 exceeded two lanes by 2-4 batches
//    in 2 of 5 runs. With the throttle disabled (the mutation below) the
//    overflow still passes three lanes (174 batches > 137 at seed 100), so a
//    violation of the remote part still points at memory that grows with the
//    run rather than at timing.
//    Half the cases use a tiny buffer.bytes (256-2048) so that the bound is
//    tight: with the throttle disabled (RSTORM_PROP_MUTATE_NO_THROTTLE=1) the
//    overflow of a slow bolt fed from another worker grows with the run and
//    the check fails (seen with RSTORM_PROP_SEED=100 RSTORM_PROP_RUNS=40).
//    Ackers: acking messages ride a control lane with its own bound of
//    buffer.bytes (bolts' acks wait when it is full; completions and failures
//    are forced past it). With max.spout.pending set, an acker's overflow is
//    bounded by the acking messages of the trees in flight (an init plus one
//    ack per tuple of each tree), which is used then. Without it the same
//    per-peer bound as for data is applied. The test starts the executors once
//    every connection is established: before the control lane had its own
//    bound, a sender refused at startup (not yet listed by its peer) buffered
//    acks without limit and they reached the acker in one burst (seed
//    11989865875981326230, acker overflow 280 batches over a bound of 180).
//
// Seeds: every case is generated from one 64-bit seed; the first case of a
// test uses the base seed, case k base + k. The base is random unless
// RSTORM_PROP_SEED is set; RSTORM_PROP_RUNS sets the number of cases per test
// (default 20 SingleProcess, 16 AcrossWorkers). A failing case prints its
// seed, its shape and every executor's queue; to replay it alone:
//   RSTORM_PROP_SEED=<seed> RSTORM_PROP_RUNS=1 flow_control_property_test
//     --gtest_filter=FlowControlProperty.<test>
// RSTORM_PROP_VERBOSE=1 prints a line per case, 2 also the shape and queues.
#include <gtest/gtest.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "rstorm/rstorm.hpp"
#include "rstorm/worker/topology_runtime.hpp"
#include "worker/process/data_plane.hpp"
#include "worker/process/slot_runtime.hpp"
#include "worker/transport/codec.hpp"
#include "worker/transport/plan_index.hpp"
#include "worker/transport/transport.hpp"

namespace rstorm::worker_process {
namespace {

using Clock = std::chrono::steady_clock;

// ---------------------------------------------------------------------------
// Settings of the property test.

constexpr int kDefaultRunsSingle = 20;
constexpr int kDefaultRunsAcross = 16;
// How long a case may take to finish before it counts as stuck. Generous: a
// case normally takes well under 2 s.
constexpr auto kDeadline = std::chrono::seconds(60);
// Tuples executed per case at most, and time spent sleeping in slow bolts
// (per executor, summed over the slowest path) at most: keeps a case short.
constexpr double kTupleBudget = 40000;
constexpr double kSlowBudgetSecs = 1.0;

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::uint64_t base_seed() {
  static const std::uint64_t seed = [] {
    if (const char* s = std::getenv("RSTORM_PROP_SEED"); s != nullptr && *s != '\0') {
      return static_cast<std::uint64_t>(std::strtoull(s, nullptr, 0));
    }
    std::random_device rd;
    return (static_cast<std::uint64_t>(rd()) << 32) ^ rd() ^
           static_cast<std::uint64_t>(Clock::now().time_since_epoch().count());
  }();
  return seed;
}

int runs(int fallback) {
  if (const char* s = std::getenv("RSTORM_PROP_RUNS"); s != nullptr && *s != '\0') {
    return std::max(0, std::atoi(s));
  }
  return fallback;
}

int verbosity() {
  const char* s = std::getenv("RSTORM_PROP_VERBOSE");
  return s == nullptr ? 0 : std::atoi(s);
}

// Mutation check, off by default: RSTORM_PROP_MUTATE_NO_THROTTLE=1 sets the
// DataPlane's high watermark out of reach, so that no executor is ever
// throttled. The AcrossWorkers bound must then fail on the cases where a
// slow bolt is fed from another worker (shows the bound is not vacuous).
bool mutate_no_throttle() {
  const char* s = std::getenv("RSTORM_PROP_MUTATE_NO_THROTTLE");
  return s != nullptr && *s != '\0' && *s != '0';
}

// ---------------------------------------------------------------------------
// The generated shape.

struct InputShape {
  int source = 0;     // component index
  bool back = false;  // the source's "back" stream (else "default")
  GroupingType grouping = GroupingType::kShuffle;
  int field = 0;      // kFields: 0 groups on "n", 1 on "k"
};

struct ComponentShape {
  std::string id;
  bool spout = false;
  int parallelism = 1;
  int tasks = 1;
  // Bolts.
  int sleep_us = 0;
  int fanout = 1;         // tuples emitted on "default" per forward input
  bool back_out = false;  // emits one tuple on "back" per forward input
  std::vector<InputShape> inputs;
  // Spouts.
  std::int64_t msgs_per_task = 0;
  // Placement across workers: worker of each executor (by ordinal).
  std::vector<int> worker_of;

  int executors() const { return std::min(parallelism, tasks); }
  std::int64_t messages() const { return msgs_per_task * tasks; }
};

struct Shape {
  std::uint64_t seed = 0;
  std::vector<ComponentShape> components;  // spouts first, then bolts
  bool acking = true;
  int ackers = 1;
  int max_spout_pending = 0;  // 0: unset
  int receive_buffer = 256;
  int batch_size = 32;
  int workers = 1;
  std::vector<int> acker_worker;  // worker of each acker
  std::size_t buffer_bytes = 8 << 20;
  bool fuse = false;  // topology.fuse.executors
  // per_root[s][c]: tuples component c executes for one message of spout s.
  std::vector<std::vector<double>> per_root;
  std::vector<std::uint64_t> expected;  // tuples each component executes in the run

  int index_of(std::string_view id) const {
    for (std::size_t i = 0; i < components.size(); ++i) {
      if (components[i].id == id) return static_cast<int>(i);
    }
    return -1;
  }
  std::size_t queue_slots() const {
    // As Executor does: buffer / batch, at least 4, rounded up to a power of 2.
    std::size_t slots = static_cast<std::size_t>(receive_buffer / batch_size);
    return std::bit_ceil(std::max<std::size_t>(slots, 4));
  }
};

std::string_view grouping_text(GroupingType g) { return grouping_name(g); }

std::string describe(const Shape& s) {
  std::ostringstream o;
  o << "seed=" << s.seed << " workers=" << s.workers << " acking=" << s.acking
    << " ackers=" << (s.acking ? s.ackers : 0) << " max.spout.pending=" << s.max_spout_pending
    << " receive.buffer.size=" << s.receive_buffer << " batch.size=" << s.batch_size
    << " (queue " << s.queue_slots() << " batches) fuse=" << s.fuse;
  if (s.workers > 1) {
    o << " transport.buffer.bytes=" << s.buffer_bytes << " ackers on workers [";
    for (std::size_t i = 0; i < s.acker_worker.size(); ++i) o << (i ? "," : "") << s.acker_worker[i];
    o << "]";
  }
  o << "\n";
  for (std::size_t c = 0; c < s.components.size(); ++c) {
    const ComponentShape& k = s.components[c];
    o << "  " << k.id << ": " << (k.spout ? "spout" : "bolt") << " executors=" << k.executors()
      << " tasks=" << k.tasks;
    if (k.spout) {
      o << " messages/task=" << k.msgs_per_task;
    } else {
      o << " sleep_us=" << k.sleep_us << " fanout=" << k.fanout << " back_out=" << k.back_out
        << " inputs=[";
      for (std::size_t i = 0; i < k.inputs.size(); ++i) {
        const InputShape& in = k.inputs[i];
        o << (i ? ", " : "") << s.components[static_cast<std::size_t>(in.source)].id << "/"
          << (in.back ? "back" : "default") << " " << grouping_text(in.grouping);
        if (in.grouping == GroupingType::kFields) o << "(" << (in.field ? "k" : "n") << ")";
      }
      o << "]";
    }
    if (s.workers > 1) {
      o << " on workers [";
      for (std::size_t i = 0; i < k.worker_of.size(); ++i) o << (i ? "," : "") << k.worker_of[i];
      o << "]";
    }
    o << " expected executed=" << s.expected[c] << "\n";
  }
  return o.str();
}

// Tuples per message of each spout at each component, in topological order
// (bolt inputs come from spouts and earlier bolts; back edges from later or
// the same bolt, whose "back" output is known once all forward inputs are).
void compute_expected(Shape& s) {
  const std::size_t n = s.components.size();
  auto mult = [&](const InputShape& in, const ComponentShape& to) {
    return in.grouping == GroupingType::kAll ? static_cast<double>(to.tasks) : 1.0;
  };
  s.per_root.assign(n, std::vector<double>(n, 0));
  s.expected.assign(n, 0);
  for (std::size_t sp = 0; sp < n; ++sp) {
    if (!s.components[sp].spout) continue;
    std::vector<double> fwd(n, 0), out(n, 0), back(n, 0);
    out[sp] = 1;  // one tuple on "default" per message
    for (std::size_t c = 0; c < n; ++c) {
      const ComponentShape& k = s.components[c];
      if (k.spout) continue;
      for (const auto& in : k.inputs) {
        if (!in.back) fwd[c] += out[static_cast<std::size_t>(in.source)] * mult(in, k);
      }
      out[c] = fwd[c] * k.fanout;
      back[c] = k.back_out ? fwd[c] : 0;
    }
    for (std::size_t c = 0; c < n; ++c) {
      const ComponentShape& k = s.components[c];
      if (k.spout) continue;
      double total = fwd[c];
      for (const auto& in : k.inputs) {
        if (in.back) total += back[static_cast<std::size_t>(in.source)] * mult(in, k);
      }
      s.per_root[sp][c] = total;
    }
  }
  for (std::size_t sp = 0; sp < n; ++sp) {
    if (!s.components[sp].spout) continue;
    for (std::size_t c = 0; c < n; ++c) {
      s.expected[c] += static_cast<std::uint64_t>(
          s.per_root[sp][c] * static_cast<double>(s.components[sp].messages()) + 0.5);
    }
  }
}

Shape generate(std::uint64_t seed, bool across_workers) {
  std::mt19937_64 rng(splitmix64(seed));
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  auto chance = [&](double p) { return std::bernoulli_distribution(p)(rng); };
  const GroupingType groupings[] = {GroupingType::kShuffle, GroupingType::kFields,
                                    GroupingType::kAll, GroupingType::kGlobal,
                                    GroupingType::kLocalOrShuffle};
  auto random_input = [&](int source, bool back) {
    InputShape in;
    in.source = source;
    in.back = back;
    in.grouping = groupings[pick(0, 4)];
    in.field = pick(0, 1);
    return in;
  };

  Shape s;
  s.seed = seed;
  for (;;) {
    s.components.clear();
    const int spouts = pick(1, 2);
    const int bolts = pick(2, 6);
    for (int i = 0; i < spouts; ++i) {
      ComponentShape k;
      k.id = "s" + std::to_string(i);
      k.spout = true;
      k.parallelism = pick(1, 3);
      k.tasks = k.parallelism + (chance(0.25) ? 1 : 0);
      s.components.push_back(std::move(k));
    }
    for (int i = 0; i < bolts; ++i) {
      ComponentShape k;
      k.id = "b" + std::to_string(i);
      k.parallelism = pick(1, 3);
      k.tasks = k.parallelism + (chance(0.25) ? 1 : 0);
      k.sleep_us = chance(0.3) ? pick(1, 200) : 0;
      const int f = pick(0, 99);
      k.fanout = f < 15 ? 0 : f < 80 ? 1 : 2;
      // Forward inputs: 1-2 distinct spouts or earlier bolts.
      const int available = spouts + i;
      const int inputs = std::min(available, pick(1, 2));
      std::set<int> chosen;
      while (static_cast<int>(chosen.size()) < inputs) chosen.insert(pick(0, available - 1));
      for (int src : chosen) k.inputs.push_back(random_input(src, false));
      s.components.push_back(std::move(k));
    }
    // Every spout feeds some bolt.
    for (int sp = 0; sp < spouts; ++sp) {
      bool fed = false;
      for (const auto& k : s.components) {
        for (const auto& in : k.inputs) fed = fed || in.source == sp;
      }
      if (!fed) s.components[static_cast<std::size_t>(pick(spouts, spouts + bolts - 1))]
                    .inputs.push_back(random_input(sp, false));
    }
    // Back edges: bolt j's "back" stream to a bolt i <= j (i == j: a self loop).
    const int back_edges = chance(0.8) ? pick(1, 2) : 0;
    for (int e = 0; e < back_edges; ++e) {
      const int j = pick(spouts, spouts + bolts - 1);
      const int i = pick(spouts, j);
      auto& to = s.components[static_cast<std::size_t>(i)];
      bool dup = false;
      for (const auto& in : to.inputs) dup = dup || (in.back && in.source == j);
      if (dup) continue;
      s.components[static_cast<std::size_t>(j)].back_out = true;
      to.inputs.push_back(random_input(j, true));
    }
    for (auto& k : s.components) k.msgs_per_task = k.spout ? 1 : 0;
    compute_expected(s);
    // Tuples per message: keep the trees small enough for a few thousand messages.
    double worst = 0;
    for (std::size_t sp = 0; sp < s.per_root.size(); ++sp) {
      double sum = 0;
      for (double v : s.per_root[sp]) sum += v;
      worst = std::max(worst, sum);
    }
    if (worst <= 60) break;
  }

  s.acking = chance(0.75);
  s.ackers = pick(1, 2);
  s.max_spout_pending = s.acking && chance(0.5) ? pick(4, 128) : 0;
  s.batch_size = pick(8, 64);
  s.receive_buffer = pick(64, 512);
  s.workers = across_workers ? pick(2, 3) : 1;
  // Half the cases with a tiny buffer (a few frames: the bound below is then
  // tight), half with a small one.
  s.buffer_bytes = chance(0.5) ? static_cast<std::size_t>(pick(256, 2048))
                               : static_cast<std::size_t>(pick(4, 64)) << 10;
  s.fuse = chance(0.5);

  // Messages per spout: a few thousand, within the tuple and slow-bolt budgets.
  double tuples_per_msg = 0;  // summed over spouts (each spout emits `m` messages)
  double slow_per_msg = 0;    // seconds of sleep on the slowest executor per message
  for (std::size_t sp = 0; sp < s.components.size(); ++sp) {
    if (!s.components[sp].spout) continue;
    for (std::size_t c = 0; c < s.components.size(); ++c) {
      const ComponentShape& k = s.components[c];
      tuples_per_msg += s.per_root[sp][c];
      if (k.sleep_us > 0) {
        // sleep_for overshoots by ~60 us on Linux.
        slow_per_msg = std::max(slow_per_msg, s.per_root[sp][c] * (k.sleep_us + 60) * 1e-6 /
                                                  k.executors());
      }
    }
  }
  double m = pick(1000, 4000);
  m = std::min(m, kTupleBudget / std::max(1.0, tuples_per_msg));
  if (slow_per_msg > 0) m = std::min(m, kSlowBudgetSecs / slow_per_msg);
  m = std::max(m, 100.0);
  for (auto& k : s.components) {
    if (k.spout) k.msgs_per_task = std::max<std::int64_t>(1, static_cast<std::int64_t>(m) / k.tasks);
  }
  compute_expected(s);

  // Placement: every worker runs something; the rest at random.
  if (s.workers > 1) {
    std::vector<int*> slots;
    for (auto& k : s.components) {
      k.worker_of.assign(static_cast<std::size_t>(k.executors()), 0);
      for (auto& w : k.worker_of) slots.push_back(&w);
    }
    for (auto* w : slots) *w = pick(0, s.workers - 1);
    std::shuffle(slots.begin(), slots.end(), rng);
    for (int w = 0; w < s.workers && w < static_cast<int>(slots.size()); ++w) *slots[static_cast<std::size_t>(w)] = w;
    s.acker_worker.clear();
    if (s.acking) {
      for (int a = 0; a < s.ackers; ++a) s.acker_worker.push_back(pick(0, s.workers - 1));
    }
  }
  return s;
}

// ---------------------------------------------------------------------------
// What the spouts and bolts saw.

struct Ledger {
  explicit Ledger(const Shape& s) : executed(new std::atomic<std::uint64_t>[s.components.size()]) {
    for (const auto& k : s.components) {
      const auto n = static_cast<std::size_t>(k.spout ? k.messages() : 0);
      acks.emplace_back(new std::atomic<std::uint32_t>[std::max<std::size_t>(1, n)]);
      for (std::size_t i = 0; i < n; ++i) acks.back()[i].store(0);
    }
    for (std::size_t c = 0; c < s.components.size(); ++c) executed[c].store(0);
  }
  std::vector<std::unique_ptr<std::atomic<std::uint32_t>[]>> acks;  // per spout, per message
  std::unique_ptr<std::atomic<std::uint64_t>[]> executed;           // per bolt
  std::atomic<std::uint64_t> acked{0};
  std::atomic<std::uint64_t> failed{0};
  std::atomic<std::uint64_t> duplicate_acks{0};
  std::atomic<std::uint64_t> bad_ids{0};
  std::atomic<std::int64_t> first_failed{-1};
};

// Emits msgs_per_task messages {n, n} with message id n, n unique per spout.
class PropSpout : public Spout {
 public:
  PropSpout(std::shared_ptr<Ledger> ledger, int component, std::int64_t limit)
      : ledger_(std::move(ledger)), component_(component), limit_(limit) {}
  void open(const Config&, const TopologyContext& ctx, SpoutOutputCollector& c) override {
    out_ = &c;
    base_ = static_cast<std::int64_t>(ctx.this_task_index()) * limit_;
  }
  void next_tuple() override {
    if (next_ >= limit_) return;
    const std::int64_t n = base_ + next_++;
    out_->emit(Values{n, n}, Value(n));
  }
  void ack(const Value& id) override {
    const std::int64_t n = id.as_int();
    if (n < base_ || n >= base_ + limit_) {
      ledger_->bad_ids.fetch_add(1);
      return;
    }
    if (ledger_->acks[static_cast<std::size_t>(component_)][static_cast<std::size_t>(n)].fetch_add(1) != 0) {
      ledger_->duplicate_acks.fetch_add(1);
    }
    ledger_->acked.fetch_add(1);
  }
  void fail(const Value& id) override {
    std::int64_t none = -1;
    ledger_->first_failed.compare_exchange_strong(none, id.as_int());
    ledger_->failed.fetch_add(1);
  }
  void declare_output_fields(OutputFieldsDeclarer& d) override { d.declare(Fields{"n", "k"}); }

 private:
  std::shared_ptr<Ledger> ledger_;
  int component_;
  std::int64_t limit_;
  std::int64_t base_ = 0;
  std::int64_t next_ = 0;
  SpoutOutputCollector* out_ = nullptr;
};

// Counts every input; a "back" input is acked and ends there; any other is
// slept on (sleep_us), emitted `fanout` times on "default" and once on
// "back" (back_out), anchored, then acked.
class PropBolt : public Bolt {
 public:
  PropBolt(std::shared_ptr<Ledger> ledger, int component, int sleep_us, int fanout, bool back_out)
      : ledger_(std::move(ledger)),
        component_(component),
        sleep_us_(sleep_us),
        fanout_(fanout),
        back_out_(back_out) {}
  void prepare(const Config&, const TopologyContext&, OutputCollector& c) override { out_ = &c; }
  void execute(const Tuple& t) override {
    ledger_->executed[static_cast<std::size_t>(component_)].fetch_add(1, std::memory_order_relaxed);
    if (t.source_stream() == "back") {
      out_->ack(t);
      return;
    }
    if (sleep_us_ > 0) std::this_thread::sleep_for(std::chrono::microseconds(sleep_us_));
    const std::int64_t n = t.get_int(0);
    const std::int64_t k = t.get_int(1);
    for (int i = 0; i < fanout_; ++i) out_->emit(t, Values{n, k * 3 + i + 1});
    if (back_out_) out_->emit("back", t, Values{n, k + 7});
    out_->ack(t);
  }
  void declare_output_fields(OutputFieldsDeclarer& d) override {
    d.declare(Fields{"n", "k"});
    d.declare_stream("back", Fields{"n", "k"});
  }

 private:
  std::shared_ptr<Ledger> ledger_;
  int component_;
  int sleep_us_;
  int fanout_;
  bool back_out_;
  OutputCollector* out_ = nullptr;
};

api::Result<Topology> build_topology(const Shape& s, const std::shared_ptr<Ledger>& ledger) {
  TopologyBuilder b;
  for (std::size_t c = 0; c < s.components.size(); ++c) {
    const ComponentShape& k = s.components[c];
    const int index = static_cast<int>(c);
    if (k.spout) {
      const std::int64_t limit = k.msgs_per_task;
      b.set_spout(k.id, [ledger, index, limit] { return std::make_unique<PropSpout>(ledger, index, limit); },
                  k.parallelism)
          .set_num_tasks(k.tasks);
      continue;
    }
    const int sleep_us = k.sleep_us, fanout = k.fanout;
    const bool back_out = k.back_out;
    auto d = b.set_bolt(k.id,
                        [ledger, index, sleep_us, fanout, back_out] {
                          return std::make_unique<PropBolt>(ledger, index, sleep_us, fanout, back_out);
                        },
                        k.parallelism);
    d.set_num_tasks(k.tasks);
    for (const auto& in : k.inputs) {
      const std::string& src = s.components[static_cast<std::size_t>(in.source)].id;
      const std::string stream = in.back ? "back" : "default";
      switch (in.grouping) {
        case GroupingType::kShuffle: d.shuffle_grouping(src, stream); break;
        case GroupingType::kFields: d.fields_grouping(src, stream, Fields{in.field ? "k" : "n"}); break;
        case GroupingType::kAll: d.all_grouping(src, stream); break;
        case GroupingType::kGlobal: d.global_grouping(src, stream); break;
        case GroupingType::kLocalOrShuffle: d.local_or_shuffle_grouping(src, stream); break;
        default: d.shuffle_grouping(src, stream); break;
      }
    }
  }
  return b.build();
}

Config topology_config(const Shape& s) {
  Config c;
  c.set(std::string(keys::kTopologyAckerExecutors), std::int64_t{s.acking ? s.ackers : 0}, "test");
  // Long enough that no tree times out before the deadline: a fail is a finding.
  c.set(std::string(keys::kTopologyMessageTimeoutSecs), std::int64_t{300}, "test");
  if (s.max_spout_pending > 0) {
    c.set(std::string(keys::kTopologyMaxSpoutPending), std::int64_t{s.max_spout_pending}, "test");
  }
  c.set(std::string(keys::kTopologyExecutorReceiveBufferSize), std::int64_t{s.receive_buffer}, "test");
  c.set(std::string(keys::kTopologyTransferBatchSize), std::int64_t{s.batch_size}, "test");
  c.set("worker.transport.buffer.bytes", static_cast<std::int64_t>(s.buffer_bytes), "test");
  c.set(std::string(keys::kTopologyFuseExecutors), s.fuse, "test");
  return c;
}

// ---------------------------------------------------------------------------
// Running a case.

// One executor's queue as seen by the sampler.
struct QueueSample {
  int worker = 0;
  worker::Executor* executor = nullptr;
  std::size_t max_depth = 0;
};

struct WorkerParts {
  std::unique_ptr<SlotRuntime> slot;
  std::unique_ptr<DataPlane> plane;
  std::unique_ptr<transport::Transport> transport;
};

// Components on a cycle (their own strongly connected component has more
// than one member, or they subscribe to themselves).
std::vector<bool> on_cycle(const worker::TopologyPlan& plan, const Shape& s) {
  std::vector<bool> out(s.components.size(), false);
  std::map<int, int> group_size;
  for (const auto& c : plan.components) ++group_size[c->cycle_group];
  for (std::size_t i = 0; i < s.components.size(); ++i) {
    const auto* c = plan.find_component(s.components[i].id);
    bool self = false;
    for (const auto& in : s.components[i].inputs) self = self || in.source == static_cast<int>(i);
    out[i] = group_size[c->cycle_group] > 1 || self;
  }
  return out;
}

class CaseRunner {
 public:
  explicit CaseRunner(Shape shape) : s_(std::move(shape)), ledger_(std::make_shared<Ledger>(s_)) {
    log_sink_ = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(64);
    logger_ = std::make_shared<spdlog::logger>("prop", log_sink_);
    logger_->set_level(spdlog::level::warn);
  }
  ~CaseRunner() { teardown(); }

  // Runs the case; returns "" or what went wrong (with everything needed to replay it).
  std::string run() {
    auto topology = build_topology(s_, ledger_);
    if (!topology.ok()) return "topology does not build: " + topology.status().message();
    topology_ = std::make_unique<Topology>(std::move(topology).value());
    if (std::string e = s_.workers == 1 ? start_single() : start_workers(); !e.empty()) return e;
    cycles_ = on_cycle(*plan_, s_);
    measure_frames();
    const auto start = Clock::now();
    bool done = false;
    while (Clock::now() - start < kDeadline) {
      sample();
      if (finished()) {
        done = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    sample();
    elapsed_ = std::chrono::duration<double>(Clock::now() - start).count();
    std::ostringstream problems;
    if (!done) problems << "did not finish within " << kDeadline.count() << " s\n";
    check_counts(problems);
    check_transport(problems);
    check_bound(problems);
    if (problems.str().empty()) {
      stop();
      // Nothing more may arrive after completion (a duplicate would show here).
      for (std::size_t c = 0; c < s_.components.size(); ++c) {
        const auto got = ledger_->executed[c].load();
        if (!s_.components[c].spout && got != s_.expected[c]) {
          problems << s_.components[c].id << " executed " << got << " after stop, expected "
                   << s_.expected[c] << "\n";
        }
      }
      if (ledger_->duplicate_acks.load() != 0) problems << "duplicate acks after stop\n";
    }
    if (problems.str().empty()) return "";
    return problems.str() + report();
  }

  double elapsed() const { return elapsed_; }
  std::string summary() const {
    std::ostringstream o;
    std::size_t max_overflow = 0, max_depth = 0;
    for (const auto& q : queues_) {
      max_overflow = std::max(max_overflow, q.executor->queue().overflow_peak());
      max_depth = std::max(max_depth, q.max_depth);
    }
    o << "seed=" << s_.seed << " workers=" << s_.workers << " acking=" << s_.acking
      << " msp=" << s_.max_spout_pending << " components=" << s_.components.size()
      << " cycles=" << std::count(cycles_.begin(), cycles_.end(), true) << " tuples=" << total_expected()
      << " time=" << elapsed_ << "s max_depth=" << max_depth << " max_overflow=" << max_overflow
      << " wire_bytes_peak=" << wire_bytes_peak_ << " wire_frames_peak=" << wire_frames_peak_ << " remote_bp=" << remote_bp_events_;
    return o.str();
  }

 private:
  std::uint64_t total_expected() const {
    std::uint64_t n = 0;
    for (std::size_t c = 0; c < s_.components.size(); ++c) n += s_.components[c].spout ? 0 : s_.expected[c];
    return n;
  }
  std::uint64_t total_messages() const {
    std::uint64_t n = 0;
    for (const auto& k : s_.components) n += k.spout ? static_cast<std::uint64_t>(k.messages()) : 0;
    return n;
  }

  std::string start_single() {
    auto rt = worker::TopologyRuntime::create("prop", topology_config(s_), *topology_, logger_, s_.seed);
    if (!rt.ok()) return "cannot create the runtime: " + rt.status().message();
    single_ = std::move(rt).value();
    plan_ = &single_->plan();
    for (const auto& e : single_->executors()) queues_.push_back({0, e.get(), 0});
    single_->start();
    running_ = true;
    return "";
  }

  std::string start_workers() {
    const Config config = topology_config(s_);
    // The assignment: every executor with its slot ("n", 6700 + worker);
    // tasks numbered from 1 in the topology's component order, as nimbus does.
    std::vector<SpecExecutor> assignment;
    int next_task = 1;
    for (const auto& spec : topology_->components()) {
      const auto& k = *std::find_if(s_.components.begin(), s_.components.end(),
                                    [&](const auto& c) { return c.id == spec.id; });
      for (int e = 0; e < k.executors(); ++e) {
        const int first = next_task + k.tasks * e / k.executors();
        const int last = next_task + k.tasks * (e + 1) / k.executors() - 1;
        assignment.push_back({k.id, first, last, "n", 6700 + k.worker_of[static_cast<std::size_t>(e)]});
      }
      next_task += k.tasks;
    }
    for (std::size_t a = 0; a < s_.acker_worker.size(); ++a) {
      const int id = -1 - static_cast<int>(a);
      assignment.push_back({"__acker", id, id, "n", 6700 + s_.acker_worker[a]});
    }
    workers_.resize(static_cast<std::size_t>(s_.workers));
    std::vector<transport::WorkerAddress> addresses(workers_.size());
    for (std::size_t w = 0; w < workers_.size(); ++w) {
      SlotRuntimeOptions o;
      o.topology_name = "prop";
      o.config = config;
      o.executors = assignment;
      o.node_id = "n";
      o.port = 6700 + static_cast<int>(w);
      o.logger = logger_;
      o.seed = s_.seed ^ (w + 1);
      auto slot = SlotRuntime::create(std::move(o), *topology_);
      if (!slot.ok()) return "cannot create worker " + std::to_string(w) + ": " + slot.status().message();
      WorkerParts& p = workers_[w];
      p.slot = std::move(slot).value();
      DataPlaneOptions dp;
      if (mutate_no_throttle()) dp.high_watermark = 1e12;
      p.plane = std::make_unique<DataPlane>(*p.slot, logger_, dp);
      const worker::TopologyPlan& plan = p.slot->runtime().plan();
      transport::TransportOptions t;
      t.topology_id = "prop-1";
      t.self = transport::WorkerAddress{"127.0.0.1", 0};
      t.local_tasks = p.slot->local_tasks();
      t.batch_size = plan.settings.batch_size;
      t.max_buffered_bytes = s_.buffer_bytes;
      t.reconnect_min = std::chrono::milliseconds(5);
      t.reconnect_max = std::chrono::milliseconds(50);
      t.logger = logger_;
      auto transport = transport::Transport::start(plan, std::move(t), p.plane.get());
      if (!transport) return "cannot start the transport of worker " + std::to_string(w);
      p.transport = std::move(transport).value();
      addresses[w] = p.transport->listen_address();
      for (const auto& e : p.slot->runtime().executors()) queues_.push_back({static_cast<int>(w), e.get(), 0});
    }
    plan_ = &workers_[0].slot->runtime().plan();
    // Routes and peers, as WorkerProcess::apply_routes does.
    for (std::size_t w = 0; w < workers_.size(); ++w) {
      WorkerParts& p = workers_[w];
      const auto& slots = p.slot->task_slots();
      std::map<int, transport::PeerWorker> peers;
      for (std::size_t t = 1; t < slots.size(); ++t) {
        if (slots[t] == p.slot->self()) continue;
        const auto peer = static_cast<std::size_t>(slots[t].port - 6700);
        auto [it, added] = peers.try_emplace(static_cast<int>(peer));
        if (added) it->second.address = addresses[peer];
        const TaskId task(static_cast<int>(t));
        it->second.tasks.push_back(task);
        p.slot->route(task, p.transport->sink(addresses[peer]));
      }
      std::vector<transport::PeerWorker> list;
      for (auto& [index, peer] : peers) list.push_back(std::move(peer));
      peer_count_.push_back(list.size());
      p.transport->set_peers(std::move(list));
      p.plane->start(p.transport.get());
    }
    // Executors start once every connection is up. A sender that connects
    // before its peer lists it is refused and retries; meanwhile its control
    // lane (acking messages, not bounded by buffer.bytes) would fill with no
    // throttle able to stop it, and land in the acker's overflow at once when
    // the connection comes up: a startup effect this bound leaves out (see
    // overflow_bound()).
    const auto connect_deadline = Clock::now() + std::chrono::seconds(20);
    for (;;) {
      bool all = true;
      for (std::size_t w = 0; w < workers_.size(); ++w) {
        all = all && workers_[w].transport->stats().connects >= peer_count_[w];
      }
      if (all) break;
      if (Clock::now() > connect_deadline) return "the workers did not all connect within 20 s";
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    for (auto& p : workers_) p.slot->start();
    running_ = true;
    return "";
  }

  void stop() {
    if (!running_) return;
    running_ = false;
    if (single_) single_->stop();
    // As WorkerProcess::shutdown: executors, then data planes, then transports.
    for (auto& p : workers_) p.slot->stop();
    for (auto& p : workers_) p.plane->stop();
    for (auto& p : workers_) p.transport->stop();
  }

 public:
  // Destroys in dependency order (transport borrows the plane and the plan).
  void teardown() {
    stop();
    for (auto& p : workers_) p.transport.reset();
    for (auto& p : workers_) p.plane.reset();
    for (auto& p : workers_) p.slot.reset();
    single_.reset();
  }

 private:
  // The smallest frame a peer can send (one envelope: a tuple {0, 0} without
  // anchors, or an acking message), and the largest batch (batch_size tuples
  // with large values and two anchors), encoded by the transport's own codec.
  void measure_frames() {
    const transport::PlanIndex index(*plan_);
    const worker::ComponentPlan* spout = nullptr;
    const worker::ComponentPlan* bolt = nullptr;
    for (const auto& c : plan_->components) {
      if (c->role == worker::ExecutorRole::kSpout && spout == nullptr) spout = c.get();
      if (c->role == worker::ExecutorRole::kBolt && bolt == nullptr) bolt = c.get();
    }
    auto encoded = [&](const worker::Batch& batch) {
      transport::FrameEncoder encoder;
      encoder.add_tuples(index, batch, batch.size());
      return encoder.size();
    };
    const StreamInfo* stream = &spout->find_stream("default")->info;
    worker::Batch one(1);
    one[0].dest = bolt->tasks.front();
    one[0].tuple = Tuple(stream, spout->tasks.front(), Values{std::int64_t{0}, std::int64_t{0}});
    min_frame_ = encoded(one);
    worker::Batch control(1);
    control[0].dest = spout->tasks.front();
    control[0].set_control(worker::MessageKind::kAckComplete, 1, 0, TaskId());
    min_frame_ = std::min(min_frame_, encoded(control));
    worker::Batch big(static_cast<std::size_t>(s_.batch_size));
    for (auto& e : big) {
      e.dest = TaskId(static_cast<std::int32_t>(plan_->task_executor.size() - 1));
      e.tuple = Tuple(stream, TaskId(static_cast<std::int32_t>(plan_->task_executor.size() - 1)),
                      Values{std::int64_t{1} << 50, std::int64_t{1} << 50});
      e.tuple.mutable_anchors().xor_in(~0ULL, ~0ULL);
      e.tuple.mutable_anchors().xor_in(~1ULL, ~0ULL);
    }
    max_batch_bytes_ = encoded(big);
  }

  void sample() {
    for (auto& q : queues_) q.max_depth = std::max(q.max_depth, q.executor->queue().depth());
    if (workers_.empty()) return;
    std::uint64_t sent = 0, received = 0, bp = 0, frames_sent = 0, frames_received = 0;
    for (const auto& p : workers_) {
      const transport::TransportStats t = p.transport->stats();
      sent += t.bytes_sent;
      received += t.bytes_received;
      frames_sent += t.frames_sent;
      frames_received += t.frames_received;  // hellos included: a few frames too many
      bp += t.remote_backpressure_events;
    }
    wire_frames_peak_ = std::max<std::uint64_t>(
        wire_frames_peak_, frames_sent > frames_received ? frames_sent - frames_received : 0);
    // Bytes written to sockets and not yet read by the peer (handshake and
    // backpressure frames included): what the kernels hold.
    wire_bytes_peak_ = std::max<std::uint64_t>(wire_bytes_peak_, sent > received ? sent - received : 0);
    remote_bp_events_ = bp;
  }

  bool finished() const {
    if (ledger_->acked.load() < total_messages()) return false;
    for (std::size_t c = 0; c < s_.components.size(); ++c) {
      if (!s_.components[c].spout && ledger_->executed[c].load() < s_.expected[c]) return false;
    }
    return true;
  }

  void check_counts(std::ostringstream& problems) const {
    const std::uint64_t messages = total_messages();
    if (ledger_->acked.load() != messages || ledger_->failed.load() != 0 ||
        ledger_->duplicate_acks.load() != 0 || ledger_->bad_ids.load() != 0) {
      problems << "spouts: " << ledger_->acked.load() << " acks of " << messages << " messages, "
               << ledger_->failed.load() << " fails (first message " << ledger_->first_failed.load()
               << "), " << ledger_->duplicate_acks.load() << " duplicate acks, "
               << ledger_->bad_ids.load() << " unknown ids\n";
      std::uint64_t missing = 0;
      std::vector<std::string> some;
      for (std::size_t c = 0; c < s_.components.size(); ++c) {
        if (!s_.components[c].spout) continue;
        for (std::int64_t n = 0; n < s_.components[c].messages(); ++n) {
          if (ledger_->acks[c][static_cast<std::size_t>(n)].load() == 0) {
            if (++missing <= 10) some.push_back(s_.components[c].id + ":" + std::to_string(n));
          }
        }
      }
      if (missing > 0) {
        problems << "  " << missing << " messages never acked, e.g.";
        for (const auto& m : some) problems << " " << m;
        problems << "\n";
      }
    }
    for (std::size_t c = 0; c < s_.components.size(); ++c) {
      if (s_.components[c].spout) continue;
      const std::uint64_t got = ledger_->executed[c].load();
      if (got != s_.expected[c]) {
        problems << s_.components[c].id << " executed " << got << " tuples, expected "
                 << s_.expected[c] << "\n";
      }
    }
  }

  void check_transport(std::ostringstream& problems) const {
    for (std::size_t w = 0; w < workers_.size(); ++w) {
      const transport::TransportStats t = workers_[w].transport->stats();
      const DataPlaneCounters d = workers_[w].plane->counters();
      if (t.connection_errors != 0 || t.frames_rejected != 0 || t.undeliverable != 0 ||
          d.undeliverable_envelopes != 0 || d.trees_failed != 0) {
        problems << "worker " << w << ": connection_errors=" << t.connection_errors
                 << " frames_rejected=" << t.frames_rejected << " undeliverable=" << t.undeliverable
                 << " dataplane undeliverable=" << d.undeliverable_envelopes
                 << " trees_failed=" << d.trees_failed << "\n";
      }
    }
  }

  // The most batches executor `e`'s overflow may hold (see the file comment).
  std::size_t overflow_bound(const QueueSample& q, std::string* why) const {
    const worker::ExecutorPlan& ep = q.executor->plan();
    const worker::ComponentPlan& comp = *ep.component;
    const double tasks_here = static_cast<double>(ep.tasks.size());
    double forced = 0;
    std::ostringstream o;
    if (comp.role == worker::ExecutorRole::kSpout) {
      if (s_.acking) {
        const int c = s_.index_of(comp.id);
        forced = s_.max_spout_pending > 0
                     ? s_.max_spout_pending * tasks_here
                     : static_cast<double>(s_.components[static_cast<std::size_t>(c)].msgs_per_task) * tasks_here;
        o << "completions of its pending trees " << forced;
      }
    } else if (comp.role == worker::ExecutorRole::kAcker && s_.workers > 1 &&
               s_.max_spout_pending > 0) {
      // Every acking message belongs to a tree in flight: an init and one ack
      // per tuple of the tree, whatever lane carried it.
      double in_flight = 0;
      for (std::size_t sp = 0; sp < s_.components.size(); ++sp) {
        if (!s_.components[sp].spout) continue;
        double per_tree = 1;
        for (double v : s_.per_root[sp]) per_tree += v;
        in_flight += s_.max_spout_pending * s_.components[sp].tasks * per_tree;
      }
      if (why != nullptr) *why = "acking messages of the trees in flight " + std::to_string(in_flight);
      return static_cast<std::size_t>(in_flight);
    } else if (comp.role == worker::ExecutorRole::kBolt) {
      const int c = s_.index_of(comp.id);
      if (cycles_[static_cast<std::size_t>(c)]) {
        // Tuples force-pushed along its cycle: at most those of the trees in flight.
        double bound = static_cast<double>(s_.expected[static_cast<std::size_t>(c)]);
        if (s_.acking && s_.max_spout_pending > 0) {
          double in_flight = 0;
          for (std::size_t sp = 0; sp < s_.components.size(); ++sp) {
            if (!s_.components[sp].spout) continue;
            in_flight += s_.max_spout_pending * s_.components[sp].tasks *
                         s_.per_root[sp][static_cast<std::size_t>(c)];
          }
          bound = std::min(bound, in_flight);
        }
        forced = bound;
        o << "cycle tuples in flight " << forced;
      }
    }
    double remote = 0;
    if (s_.workers > 1) {
      // Peers that run a producer of this executor (every peer for ackers).
      std::set<int> peers;
      for (const auto& p : queues_) {
        if (p.worker == q.worker) continue;
        const worker::ComponentPlan& from = *p.executor->plan().component;
        bool sends = false;
        if (comp.role == worker::ExecutorRole::kAcker) {
          sends = from.role != worker::ExecutorRole::kAcker;
        } else if (comp.role == worker::ExecutorRole::kSpout) {
          sends = from.role == worker::ExecutorRole::kAcker;
        } else {
          for (const auto& st : from.streams) {
            for (const auto& sub : st->subscriptions) sends = sends || sub.component == comp.id;
          }
        }
        if (sends) peers.insert(p.worker);
      }
      for (int w : peers) {
        std::size_t producers = 0;
        for (const auto& p : queues_) producers += p.worker == w ? 1 : 0;
        // The data lane: frames while under the byte limit, plus one batch
        // (one frame) per producer and task of this executor that passed the
        // check at the same time (a producer batches per remote task); the
        // write in progress took a whole lane: as much again; and what the
        // peer pushes while the backpressure frame travels back, in which its
        // lane refills at most once more: a third lane.
        const double lane = static_cast<double>(s_.buffer_bytes / min_frame_ + 1) +
                            static_cast<double>(producers) * tasks_here;
        remote += 3 * lane;
      }
      // Frames written to sockets and not yet decoded (all connections).
      if (!peers.empty()) remote += static_cast<double>(wire_frames_peak_);
      if (!peers.empty()) o << (forced > 0 ? " + " : "") << "remote in flight " << remote << " frames from "
                            << peers.size() << " peers, " << wire_frames_peak_ << " of them on the wire";
    }
    if (why != nullptr) *why = o.str();
    return static_cast<std::size_t>(forced + remote);
  }

  void check_bound(std::ostringstream& problems) const {
    for (const auto& q : queues_) {
      const std::size_t peak = q.executor->queue().overflow_peak();
      std::string why;
      const std::size_t bound = overflow_bound(q, &why);
      if (peak > bound) {
        problems << "worker " << q.worker << " executor " << q.executor->plan().index << " ("
                 << q.executor->plan().component->id << "): overflow peak " << peak
                 << " batches > bound " << bound << " (" << (why.empty() ? "nothing may overflow" : why)
                 << ")\n";
      }
    }
  }

  std::string report() const {
    std::ostringstream o;
    o << "replay: RSTORM_PROP_SEED=" << s_.seed << " RSTORM_PROP_RUNS=1 flow_control_property_test"
      << " --gtest_filter=FlowControlProperty." << (s_.workers > 1 ? "AcrossWorkers" : "SingleProcess")
      << "\nshape: " << describe(s_);
    o << "spouts: acked " << ledger_->acked.load() << "/" << total_messages() << ", failed "
      << ledger_->failed.load() << "\n";
    o << queues_text();
    o << "peak bytes on the wire " << wire_bytes_peak_ << ", smallest frame " << min_frame_
      << " bytes, largest batch " << max_batch_bytes_ << " bytes\nlog:\n";
    for (const auto& line : log_sink_->last_formatted()) o << "  " << line;
    return o.str();
  }

 public:
  std::string queues_text() const {
    std::ostringstream o;
    o << "queues (capacity " << s_.queue_slots() << " batches):\n";
    for (const auto& q : queues_) {
      const auto& rq = q.executor->queue();
      const auto& st = q.executor->stats();
      o << "  worker " << q.worker << " executor " << q.executor->plan().index << " "
        << q.executor->plan().component->id
        << (!cycles_.empty() && q.executor->plan().component->role == worker::ExecutorRole::kBolt &&
                    cycles_[static_cast<std::size_t>(s_.index_of(q.executor->plan().component->id))]
                ? " (on a cycle)"
                : "")
        << ": depth " << rq.depth() << " overflow " << rq.overflow_depth() << " (peak "
        << rq.overflow_peak() << ", bound " << overflow_bound(q, nullptr) << ") max sampled depth " << q.max_depth << " executed "
        << st.executed.load() << " emitted " << st.emitted.load() << " acked " << st.acked.load()
        << " failed " << st.failed.load() << " backpressure waits " << st.backpressure_waits.load()
        << " in flight " << q.executor->in_flight() << "\n";
    }
    for (std::size_t w = 0; w < workers_.size(); ++w) {
      const transport::TransportStats t = workers_[w].transport->stats();
      const DataPlaneCounters d = workers_[w].plane->counters();
      o << "  worker " << w << " transport: tuples sent " << t.tuples_sent << " received "
        << t.tuples_received << " bytes sent " << t.bytes_sent << " received " << t.bytes_received
        << " connects " << t.connects << " errors " << t.connection_errors << " remote bp events "
        << t.remote_backpressure_events << " local bp events " << t.local_backpressure_events
        << "; dataplane engaged " << d.backpressure_engaged << " released " << d.backpressure_released
        << " throttled now " << d.throttled_tasks << "\n";
    }
    return o.str();
  }

 private:

  Shape s_;
  std::shared_ptr<Ledger> ledger_;
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> log_sink_;
  std::shared_ptr<spdlog::logger> logger_;
  std::unique_ptr<Topology> topology_;
  std::unique_ptr<worker::TopologyRuntime> single_;
  std::vector<WorkerParts> workers_;
  const worker::TopologyPlan* plan_ = nullptr;
  std::vector<QueueSample> queues_;
  std::vector<bool> cycles_;
  std::uint64_t wire_bytes_peak_ = 0;
  std::uint64_t wire_frames_peak_ = 0;
  std::vector<std::size_t> peer_count_;  // per worker
  std::size_t min_frame_ = 1;
  std::size_t max_batch_bytes_ = 0;
  std::uint64_t remote_bp_events_ = 0;
  bool running_ = false;
  double elapsed_ = 0;
};

void run_cases(bool across_workers, int default_runs) {
  const std::uint64_t base = base_seed();
  const int n = runs(default_runs);
  std::cout << "[ property ] base seed " << base << ", " << n << " cases"
            << " (replay with RSTORM_PROP_SEED=" << base << ")" << std::endl;
  const auto start = Clock::now();
  for (int i = 0; i < n; ++i) {
    const std::uint64_t seed = base + static_cast<std::uint64_t>(i);
    Shape shape = generate(seed, across_workers);
    CaseRunner runner(shape);
    const std::string failure = runner.run();
    if (verbosity() > 0) std::cout << "[ property ] " << runner.summary() << std::endl;
    if (verbosity() > 1) std::cout << describe(shape) << runner.queues_text() << std::endl;
    runner.teardown();
    ASSERT_EQ(failure, "") << "case " << i << " seed " << seed << " failed";
  }
  if (verbosity() > 0) {
    std::cout << "[ property ] " << n << " cases in "
              << std::chrono::duration<double>(Clock::now() - start).count() << " s" << std::endl;
  }
}

TEST(FlowControlProperty, SingleProcess) { run_cases(false, kDefaultRunsSingle); }

TEST(FlowControlProperty, AcrossWorkers) { run_cases(true, kDefaultRunsAcross); }

}  // namespace
}  // namespace rstorm::worker_process
