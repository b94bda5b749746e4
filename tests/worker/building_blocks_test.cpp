// The runtime's building blocks on their own: the receive queue and the ack table.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "rstorm/worker/ack_table.hpp"
#include "rstorm/worker/bolt_executor.hpp"
#include "rstorm/worker/receive_queue.hpp"
#include "rstorm/worker/transfer.hpp"
#include "tests/common/poll.hpp"

namespace rstorm::worker {
namespace {

Batch batch_of(std::int32_t producer, std::int64_t first, int n) {
  Batch b;
  for (int i = 0; i < n; ++i) {
    Envelope e;
    e.dest = TaskId(producer);
    e.set_control(MessageKind::kAck, static_cast<std::uint64_t>(first + i), 0, TaskId());
    b.push_back(std::move(e));
  }
  return b;
}

TEST(ReceiveQueue, FullQueueRefusesWithoutTakingTheBatch) {
  ReceiveQueue q(2);
  Batch a = batch_of(0, 0, 3), b = batch_of(0, 3, 3), c = batch_of(0, 6, 3);
  EXPECT_TRUE(q.try_push(a));
  EXPECT_TRUE(q.try_push(b));
  EXPECT_FALSE(q.try_push(c));
  EXPECT_EQ(c.size(), 3u);  // untouched: the producer keeps it
  EXPECT_EQ(q.depth(), 2u);
  Batch out;
  ASSERT_TRUE(q.try_pop(out));
  EXPECT_EQ(out.front().root(), 0u);
  EXPECT_TRUE(q.try_push(c));
}

TEST(ReceiveQueue, ManyProducersLoseNothingAndKeepPerProducerOrder) {
  ReceiveQueue q(8);
  constexpr int kProducers = 3, kBatches = 2000, kPerBatch = 16;
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&q, p] {
      for (int i = 0; i < kBatches; ++i) {
        Batch b = batch_of(p, static_cast<std::int64_t>(i) * kPerBatch, kPerBatch);
        while (!q.try_push(b)) std::this_thread::yield();
      }
    });
  }
  std::vector<std::uint64_t> next(kProducers, 0);
  std::size_t received = 0;
  Batch out;
  while (received < static_cast<std::size_t>(kProducers * kBatches * kPerBatch)) {
    if (!q.try_pop(out)) {
      q.park(std::chrono::microseconds(100));
      continue;
    }
    for (const auto& e : out) {
      ASSERT_EQ(e.root(), next[static_cast<std::size_t>(e.dest.value)]++);
      ++received;
    }
  }
  for (auto& t : producers) t.join();
  EXPECT_FALSE(q.try_pop(out));
}

TEST(ReceiveQueue, ForcedPushesOverflowInOrderAndHoldBackOrdinaryPushesUntilDrained) {
  ReceiveQueue q(2);
  Batch a = batch_of(0, 0, 1), b = batch_of(0, 1, 1);
  EXPECT_TRUE(q.push_or_overflow(a));  // room in the ring
  EXPECT_TRUE(q.push_or_overflow(b));
  for (int i = 2; i < 6; ++i) {
    Batch more = batch_of(0, i, 1);
    EXPECT_FALSE(q.push_or_overflow(more));  // into the overflow, never refused
    EXPECT_TRUE(more.empty());
  }
  EXPECT_EQ(q.depth(), 6u);
  EXPECT_EQ(q.overflow_depth(), 4u);
  EXPECT_EQ(q.overflow_peak(), 4u);
  EXPECT_TRUE(q.full());
  Batch out;
  ASSERT_TRUE(q.try_pop(out));
  EXPECT_EQ(out.front().root(), 0u);
  // The ring has room, but an ordinary push must not overtake the overflow.
  Batch late = batch_of(1, 100, 1);
  EXPECT_FALSE(q.try_push(late));
  EXPECT_EQ(late.size(), 1u);
  for (std::uint64_t want = 1; want < 6; ++want) {
    ASSERT_TRUE(q.try_pop(out));
    EXPECT_EQ(out.front().root(), want);
  }
  EXPECT_EQ(q.overflow_depth(), 0u);
  EXPECT_FALSE(q.full());
  EXPECT_TRUE(q.try_push(late));
  ASSERT_TRUE(q.try_pop(out));
  EXPECT_EQ(out.front().root(), 100u);
  EXPECT_FALSE(q.try_pop(out));
}

TEST(ReceiveQueue, ParkedConsumerWakesForAForcedPushIntoTheOverflow) {
  ReceiveQueue q(2);
  Batch a = batch_of(0, 0, 1), b = batch_of(0, 1, 1);
  ASSERT_TRUE(q.try_push(a));
  ASSERT_TRUE(q.try_push(b));
  Batch out;
  ASSERT_TRUE(q.try_pop(out));
  ASSERT_TRUE(q.try_pop(out));
  std::atomic<bool> got{false};
  std::thread consumer([&] {
    Batch in;
    while (!q.try_pop(in)) q.park(std::chrono::seconds(30));
    got = in.front().root() == 7u;
  });
  // Fill the ring from here, then overflow: the consumer takes all in turn.
  for (int i = 7; i < 10; ++i) {
    Batch x = batch_of(0, i, 1);
    q.push_or_overflow(x);
  }
  consumer.join();
  EXPECT_TRUE(got.load());
}

// A Transfer over one receive queue of `capacity` batches, to which task 1
// goes, in batches of `batch_size`.
struct OneQueue {
  OneQueue(std::size_t capacity, std::size_t batch_size)
      : q(capacity),
        transfer(&sinks, 1, &task_sink, {}, batch_size, Transfer::Mode::kBlocking, &stats,
                 &stopping) {
    transfer.bind_sinks();
  }
  ReceiveQueue q;
  std::vector<TupleSink*> sinks{&q};
  std::vector<int> task_sink{0, 0};
  ExecutorStats stats;
  std::atomic<bool> stopping{false};
  Transfer transfer;
};

// A consumer parked with a long timeout, run on a thread: `woken` once its
// park returns.
struct ParkedConsumer {
  explicit ParkedConsumer(ReceiveQueue& q)
      : thread([&q, this] {
          q.park(std::chrono::seconds(120));
          woken = true;
        }) {}
  ~ParkedConsumer() { thread.join(); }
  std::atomic<bool> woken{false};
  std::thread thread;
};

// A push that defers the wake (a producer in the middle of a burst) leaves a
// parked consumer asleep and says so; the producer's wake() wakes it.
TEST(ReceiveQueue, APushDeferringTheWakeLeavesAParkedConsumerAsleepUntilWoken) {
  ReceiveQueue q(64);
  ParkedConsumer consumer(q);
  ASSERT_TRUE(testing::eventually([&] { return q.consumer_parked(); }));
  Batch b = batch_of(0, 1, 1);
  bool owed = false;
  ASSERT_TRUE(q.try_push_deferring_wake(b, &owed));
  EXPECT_TRUE(owed);
  q.wake();
  EXPECT_TRUE(testing::eventually([&] { return consumer.woken.load(); }));
  Batch out;
  ASSERT_TRUE(q.try_pop(out));
  EXPECT_EQ(out.front().root(), 1u);
}

// Once kWakeDepth batches wait, the push wakes the consumer itself: a
// producer that never runs out of work still hands them on.
TEST(ReceiveQueue, APushDeferringTheWakeWakesAParkedConsumerOnceEightBatchesWait) {
  ReceiveQueue q(64);
  ParkedConsumer consumer(q);
  ASSERT_TRUE(testing::eventually([&] { return q.consumer_parked(); }));
  for (std::size_t i = 0; i + 1 < ReceiveQueue::kWakeDepth; ++i) {
    Batch b = batch_of(0, static_cast<std::int64_t>(i), 1);
    bool owed = false;
    ASSERT_TRUE(q.try_push_deferring_wake(b, &owed));
    EXPECT_TRUE(owed) << i;
  }
  Batch last = batch_of(0, ReceiveQueue::kWakeDepth - 1, 1);
  bool owed = true;
  ASSERT_TRUE(q.try_push_deferring_wake(last, &owed));
  EXPECT_FALSE(owed);
  EXPECT_TRUE(testing::eventually([&] { return consumer.woken.load(); }));
}

// The network reader's push (push_or_overflow) defers the wake the same way
// when asked to; a batch into the overflow wakes the consumer at once.
TEST(ReceiveQueue, AReaderPushDeferringTheWakeLeavesAParkedConsumerAsleepUntilWoken) {
  ReceiveQueue q(64);
  ParkedConsumer consumer(q);
  ASSERT_TRUE(testing::eventually([&] { return q.consumer_parked(); }));
  Batch b = batch_of(0, 1, 1);
  bool owed = false;
  EXPECT_TRUE(q.push_or_overflow(b, false, &owed));
  EXPECT_TRUE(owed);
  q.wake();
  EXPECT_TRUE(testing::eventually([&] { return consumer.woken.load(); }));
}

// A Transfer's full batch to a parked consumer: the wake is owed, and paid
// when the producer runs out of work (wake_consumers), or by a flush once
// kWakeDelayNs has passed for one that never does.
TEST(Transfer, AWakeOwedToAParkedConsumerIsPaidWhenTheProducerRunsOutOfWork) {
  OneQueue one(64, 2);
  ReceiveQueue& q = one.q;
  Transfer& transfer = one.transfer;
  const auto send_batch = [&] {
    for (int i = 0; i < 2; ++i) {
      transfer.append(TaskId(1)).tuple = Tuple(nullptr, TaskId(7), Values{Value(std::int64_t(i))});
      transfer.commit();  // the second fills the batch: pushed
    }
  };
  {
    ParkedConsumer consumer(q);
    ASSERT_TRUE(testing::eventually([&] { return q.consumer_parked(); }));
    send_batch();
    EXPECT_TRUE(q.consumer_parked());  // owed, not paid
    transfer.wake_consumers();
    EXPECT_TRUE(testing::eventually([&] { return consumer.woken.load(); }));
  }
  Batch out;
  while (q.try_pop(out)) {
  }
  {
    ParkedConsumer consumer(q);
    ASSERT_TRUE(testing::eventually([&] { return q.consumer_parked(); }));
    send_batch();
    // A producer that keeps working: its flushes pay the wake once it is due.
    EXPECT_TRUE(testing::eventually([&] {
      transfer.flush();
      return consumer.woken.load();
    }));
  }
}

// A producer waiting for room with a long timeout is woken by the consumer
// draining the ring to its low-water mark (half), and only then finds room
// for many batches: it is not left to its timeout.
TEST(ReceiveQueue, AProducerWaitingForRoomWakesWhenTheRingIsDownToHalf) {
  ReceiveQueue q(8);
  for (int i = 0; i < 8; ++i) {
    Batch b = batch_of(0, i, 1);
    ASSERT_TRUE(q.try_push(b));
  }
  std::atomic<int> pushed{0};
  std::atomic<bool> waiting{false};
  std::thread producer([&] {
    for (int i = 8; i < 12; ++i) {
      Batch b = batch_of(0, i, 1);
      while (!q.try_push(b)) {
        waiting = true;
        q.wait_for_space(std::chrono::seconds(120));
      }
      ++pushed;
    }
  });
  ASSERT_TRUE(testing::eventually([&] { return waiting.load(); }));
  // Drain everything in order; the producer's four batches come after the
  // eight (it can only push once there is room, and it is woken for it).
  Batch out;
  std::vector<std::uint64_t> roots;
  ASSERT_TRUE(testing::eventually([&] {
    while (q.try_pop(out)) roots.push_back(out.front().root());
    return roots.size() == 12;
  }));
  producer.join();
  EXPECT_EQ(pushed.load(), 4);
  for (std::size_t i = 0; i < roots.size(); ++i) EXPECT_EQ(roots[i], i);
}

// Checks `table` against `model` entry by entry, and the other way round.
void ExpectSameEntries(AckTable<std::uint64_t>& table,
                       const std::map<std::uint64_t, std::uint64_t>& model) {
  ASSERT_EQ(table.size(), model.size());
  for (const auto& [k, v] : model) {
    auto* found = table.find(k);
    ASSERT_NE(found, nullptr) << std::hex << k;
    ASSERT_EQ(*found, v) << std::hex << k;
  }
  std::size_t visited = 0;
  table.for_each([&](std::uint64_t k, std::uint64_t& v) {
    ++visited;
    auto it = model.find(k);
    ASSERT_NE(it, model.end()) << std::hex << k;
    EXPECT_EQ(v, it->second);
  });
  EXPECT_EQ(visited, model.size());
}

// Random inserts, lookups and erases against a std::map, with keys that are
// not roots (the overflow alone), roots of a few producers whose counters
// collide in their rings, and both mixed.
// A Transfer over two receive queues: tasks 1 and 2 go to queue 0, task 3
// to queue 1.
struct TwoQueues {
  ReceiveQueue q0{64};
  ReceiveQueue q1{64};
  std::vector<TupleSink*> sinks{&q0, &q1};
  std::vector<int> task_sink{0, 0, 0, 1};
  ExecutorStats stats;
  std::atomic<bool> stopping{false};
  Transfer transfer{&sinks, 2, &task_sink, {}, 1000, Transfer::Mode::kBlocking, &stats, &stopping};

  TwoQueues() { transfer.bind_sinks(); }
  Batch drain(ReceiveQueue& q) {
    Batch all;
    Batch b;
    while (q.try_pop(b)) {
      for (auto& e : b) all.push_back(std::move(e));
    }
    return all;
  }
};

TEST(Transfer, AckingMessagesOfOneKindFromOneTaskToOneTaskShareAnEnvelope) {
  TwoQueues t;
  const auto n = Transfer::kMaxCoalescedMessages;
  for (std::uint64_t r = 1; r <= n + 3; ++r) {
    t.transfer.send_control(TaskId(1), MessageKind::kAck, r, r * 10, TaskId(7));
    t.transfer.append(TaskId(2)).tuple = Tuple(nullptr, TaskId(7), Values{Value(std::int64_t(1))});
    t.transfer.commit();  // tuples in between do not stop the joining
  }
  // Root 1 is in the first envelope, which is full: this ack joins the second.
  t.transfer.send_control(TaskId(1), MessageKind::kAck, 1, 5, TaskId(7));
  t.transfer.send_control(TaskId(1), MessageKind::kFail, 100, 0, TaskId(7));     // another kind
  t.transfer.send_control(TaskId(1), MessageKind::kFail, 101, 0, TaskId(8));     // another task
  t.transfer.send_control(TaskId(2), MessageKind::kFail, 102, 0, TaskId(8));     // another dest
  t.transfer.send_control(TaskId(3), MessageKind::kAckInit, 103, 1, TaskId(7));  // another sink
  t.transfer.send_control(TaskId(3), MessageKind::kAckInit, 104, 2, TaskId(7));
  ASSERT_TRUE(t.transfer.flush());

  Batch q0 = t.drain(t.q0);
  std::vector<const Envelope*> control;
  std::size_t tuples = 0;
  for (const auto& e : q0) {
    if (e.kind == MessageKind::kTuple) {
      ++tuples;
    } else {
      control.push_back(&e);
    }
  }
  EXPECT_EQ(tuples, n + 3);
  ASSERT_EQ(control.size(), 5u);
  // The first envelope took kMaxCoalescedMessages acks, the second the rest.
  EXPECT_EQ(control[0]->kind, MessageKind::kAck);
  ASSERT_EQ(control[0]->messages(), n);
  for (std::size_t i = 0; i < n; ++i) {
    EXPECT_EQ(control[0]->root(i), i + 1);
    EXPECT_EQ(control[0]->value(i), (i + 1) * 10);
    EXPECT_EQ(control[0]->task(), TaskId(7));
  }
  ASSERT_EQ(control[1]->messages(), 4u);  // roots n+1..n+3, then root 1 again
  EXPECT_EQ(control[1]->root(3), 1u);
  EXPECT_EQ(control[1]->value(3), 5u);
  EXPECT_EQ(control[2]->kind, MessageKind::kFail);
  EXPECT_EQ(control[2]->task(), TaskId(7));
  EXPECT_EQ(control[3]->task(), TaskId(8));
  EXPECT_EQ(control[4]->dest, TaskId(2));
  for (std::size_t i = 2; i < 5; ++i) EXPECT_EQ(control[i]->messages(), 1u);

  Batch q1 = t.drain(t.q1);
  ASSERT_EQ(q1.size(), 1u);
  ASSERT_EQ(q1[0].messages(), 2u);
  EXPECT_EQ(q1[0].root(1), 104u);
  EXPECT_EQ(q1[0].value(1), 2u);
}

TEST(Transfer, AnAckToARootTheEnvelopeHoldsIsXoredIn) {
  TwoQueues t;
  t.transfer.send_control(TaskId(3), MessageKind::kAck, 9, 0b0110, TaskId());
  t.transfer.send_control(TaskId(3), MessageKind::kAck, 9, 0b0011, TaskId());
  ASSERT_TRUE(t.transfer.flush());
  Batch q1 = t.drain(t.q1);
  ASSERT_EQ(q1.size(), 1u);
  ASSERT_EQ(q1[0].messages(), 1u);
  EXPECT_EQ(q1[0].value(0), 0b0101u);
}

// Only the last message's root is looked at: an ack of a root further back
// is a message of its own, and the acker XORs both.
TEST(Transfer, AnAckToAnEarlierRootIsAMessageOfItsOwn) {
  TwoQueues t;
  t.transfer.send_control(TaskId(3), MessageKind::kAck, 9, 0b0110, TaskId());
  t.transfer.send_control(TaskId(3), MessageKind::kAck, 5, 0b1000, TaskId());
  t.transfer.send_control(TaskId(3), MessageKind::kAck, 9, 0b0011, TaskId());
  t.transfer.send_control(TaskId(3), MessageKind::kAck, 9, 0b0001, TaskId());
  ASSERT_TRUE(t.transfer.flush());
  Batch q1 = t.drain(t.q1);
  ASSERT_EQ(q1.size(), 1u);
  ASSERT_EQ(q1[0].messages(), 3u);
  EXPECT_EQ(q1[0].root(0), 9u);
  EXPECT_EQ(q1[0].value(0), 0b0110u);
  EXPECT_EQ(q1[0].root(1), 5u);
  EXPECT_EQ(q1[0].value(1), 0b1000u);
  EXPECT_EQ(q1[0].root(2), 9u);
  EXPECT_EQ(q1[0].value(2), 0b0010u);
}

// A barrier keeps its place: no acking message sent after it joins an
// envelope before it.
TEST(Transfer, NothingSentAfterABarrierJoinsAnEnvelopeBeforeIt) {
  TwoQueues t;
  t.transfer.send_control(TaskId(3), MessageKind::kAckComplete, 1, 0, TaskId(5));
  t.transfer.send_control(TaskId(3), MessageKind::kBarrier, 42, 0, TaskId(5));
  t.transfer.send_control(TaskId(3), MessageKind::kAckComplete, 2, 0, TaskId(5));
  t.transfer.send_control(TaskId(3), MessageKind::kAckComplete, 3, 0, TaskId(5));
  ASSERT_TRUE(t.transfer.flush());
  Batch q1 = t.drain(t.q1);
  ASSERT_EQ(q1.size(), 3u);
  EXPECT_EQ(q1[0].messages(), 1u);
  EXPECT_EQ(q1[1].kind, MessageKind::kBarrier);
  ASSERT_EQ(q1[2].messages(), 2u);
  EXPECT_EQ(q1[2].root(0), 2u);
  EXPECT_EQ(q1[2].root(1), 3u);
}

// A queue hands the producer back the batch its consumer finished with, and
// the Transfer fills those envelopes again in place. Nothing of an old
// envelope may show in a new one: not its values (more, fewer, strings),
// anchors, ack value or completion, nor a tuple's values in a control
// message. Random rounds of tuples and barriers through a queue of two
// slots, so that every batch comes back to be filled again, with the
// consumer marking, acking and moving from what it received.
TEST(Transfer, AnEnvelopeFilledAgainKeepsNothingOfItsLastUse) {
  struct Expected {
    MessageKind kind;
    Values values;
    std::vector<AnchorEntry> anchors;
    std::uint64_t root = 0;  // a barrier's checkpoint
  };
  OneQueue one(2, 1000);
  ReceiveQueue& q = one.q;
  Transfer& transfer = one.transfer;
  const StreamInfo info{"spout", "default", Fields{}};
  std::mt19937_64 rng(7);
  Batch received;
  std::size_t checked = 0;
  for (int round = 0; round < 200; ++round) {
    std::vector<Expected> expected;
    const int n = static_cast<int>(rng() % 9) + 1;
    for (int i = 0; i < n; ++i) {
      if (rng() % 4 == 0) {
        const std::uint64_t id = rng() % 1000 + 1;
        transfer.send_control(TaskId(1), MessageKind::kBarrier, id, 0, TaskId(5));
        expected.push_back({MessageKind::kBarrier, {}, {}, id});
        continue;
      }
      Expected x{MessageKind::kTuple, {}, {}};
      const int values = static_cast<int>(rng() % 6);
      for (int v = 0; v < values; ++v) {
        if (rng() % 2 == 0) {
          x.values.emplace_back(static_cast<std::int64_t>(rng()));
        } else {
          x.values.emplace_back(std::string(rng() % 40, 'a' + static_cast<char>(rng() % 26)));
        }
      }
      const int anchors = static_cast<int>(rng() % 4);
      for (int a = 0; a < anchors; ++a) x.anchors.push_back({rng() | 1, rng()});
      Envelope& e = transfer.append(TaskId(1));
      e.tuple.assign(&info, TaskId(7), x.values);
      for (const AnchorEntry& a : x.anchors) e.tuple.mutable_anchors().xor_in(a.root, a.edge);
      transfer.commit();
      expected.push_back(std::move(x));
    }
    ASSERT_TRUE(transfer.flush());
    ASSERT_TRUE(q.try_pop(received));  // hands the batch before back to the queue
    ASSERT_EQ(received.size(), expected.size()) << "round " << round;
    for (std::size_t i = 0; i < received.size(); ++i) {
      Envelope& e = received[i];
      const Expected& x = expected[i];
      SCOPED_TRACE("round " + std::to_string(round) + " envelope " + std::to_string(i));
      EXPECT_EQ(e.dest, TaskId(1));
      ASSERT_EQ(e.kind, x.kind);
      EXPECT_EQ(e.tuple.values(), x.values);
      if (x.kind == MessageKind::kBarrier) {
        ASSERT_EQ(e.messages(), 1u);
        EXPECT_EQ(e.root(), x.root);
        EXPECT_EQ(e.task(), TaskId(5));
      } else {
        ASSERT_EQ(e.tuple.anchors().size(), x.anchors.size());
        for (std::size_t a = 0; a < x.anchors.size(); ++a) {
          EXPECT_EQ(e.tuple.anchors()[a].root, x.anchors[a].root);
          EXPECT_EQ(e.tuple.anchors()[a].edge, x.anchors[a].edge);
        }
        EXPECT_EQ(e.tuple.source(), &info);
        EXPECT_EQ(e.tuple.source_task(), TaskId(7));
        EXPECT_EQ(e.tuple.ack_val(), 0u);
        EXPECT_FALSE(e.tuple.completed());
      }
      ++checked;
      // What a consumer leaves behind: acked, completed, values moved away.
      e.tuple.xor_ack_val(rng() | 1);
      e.tuple.mark_completed();
      if (rng() % 3 == 0) Values taken = std::move(e.tuple.mutable_values());
    }
  }
  EXPECT_GT(checked, 800u);
}

TEST(AckTable, MatchesAMapUnderRandomInsertsAndErases) {
  struct Case {
    const char* name;
    std::uint64_t stride;
    std::uint64_t (*key)(std::mt19937_64&);
  };
  const Case cases[] = {
      {"plain keys", 1, [](std::mt19937_64& r) { return r() % 5000 + 1; }},
      {"roots of 3 producers", 1,
       [](std::mt19937_64& r) { return ((r() % 3 + 1) << 40) | (r() % 5000); }},
      {"roots 4 apart", 4,
       [](std::mt19937_64& r) { return ((r() % 2 + 1) << 40) | (4 * (r() % 3000) + 1); }},
      {"mixed", 1,
       [](std::mt19937_64& r) {
         return r() % 2 == 0 ? r() % 5000 + 1 : ((r() % 70000) << 40) | (r() % 300);
       }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    AckTable<std::uint64_t> table(c.stride);
    std::map<std::uint64_t, std::uint64_t> model;
    std::mt19937_64 rng(42);
    for (int i = 0; i < 200000; ++i) {
      const std::uint64_t key = c.key(rng);
      if (key == 0) continue;
      const auto r = rng() % 6;
      if (r == 0) {
        ASSERT_EQ(table.erase(key), model.erase(key) == 1) << std::hex << key;
      } else if (r == 1) {
        auto* v = table.find(key);
        ASSERT_EQ(v != nullptr, model.count(key) == 1) << std::hex << key;
        if (v != nullptr) {
          ASSERT_EQ(*v, model[key]);
        }
      } else {
        bool inserted = false;
        table.get_or_insert(key, &inserted) ^= static_cast<std::uint64_t>(i);
        ASSERT_EQ(inserted, model.count(key) == 0) << std::hex << key;
        model[key] ^= static_cast<std::uint64_t>(i);
      }
    }
    ExpectSameEntries(table, model);
  }
}

// Roots as spouts make them (a producer in the high bits, a counter in the
// low ones), from two producers at once, a window of each in flight,
// completing mostly oldest first: every tree stays in its producer's ring
// (none falls back to the overflow), and once the windows close the table is
// back to its smallest.
TEST(AckTable, KeepsSlidingWindowsOfRootsInRings) {
  AckTable<std::uint64_t> table;
  constexpr std::uint64_t kWindow = 3000;
  std::mt19937_64 rng(7);
  std::map<std::uint64_t, std::uint64_t> model;
  std::map<int, std::uint64_t> open[2];  // by emit order: its root
  // Counters start anywhere, near the top of the 40 bits for one of them.
  std::uint64_t counter[2] = {(std::uint64_t{1} << 40) - 100000, 12345};
  for (int n = 0; n < 400000; ++n) {
    const int p = static_cast<int>(rng() % 2);
    const std::uint64_t root =
        (static_cast<std::uint64_t>(p + 1) << 40) | (++counter[p] & ((std::uint64_t{1} << 40) - 1));
    table.get_or_insert(root) = root * 3;
    model[root] = root * 3;
    open[p][n] = root;
    if (open[p].size() > kWindow) {
      auto it = open[p].begin();
      std::advance(it, static_cast<long>(rng() % 4));
      ASSERT_TRUE(table.erase(it->second)) << std::hex << it->second;
      model.erase(it->second);
      open[p].erase(it);
    }
    ASSERT_EQ(table.overflow_size(), 0u) << "at " << n;
  }
  ExpectSameEntries(table, model);
  const std::size_t wide = table.capacity();
  for (auto& o : open) {
    for (const auto& [n, root] : o) ASSERT_TRUE(table.erase(root));
    o.clear();
  }
  EXPECT_EQ(table.size(), 0u);
  EXPECT_LT(table.capacity(), wide / 8) << "the rings shrink as their trees complete";
}

// A tree that stays pending while its producer's counter laps the ring (a
// slow or lost tree, until the message timeout) moves to the overflow and is
// still found and erased there; the trees after it keep their ring.
TEST(AckTable, KeepsATreeThatOutlivesItsRingsLap) {
  AckTable<std::uint64_t> table;
  constexpr std::uint64_t kProducer = std::uint64_t{5} << 40;
  const std::uint64_t straggler = kProducer | 1;
  table.get_or_insert(straggler) = 42;
  for (std::uint64_t c = 2; c < 100000; ++c) {
    table.get_or_insert(kProducer | c) = c;
    if (c >= 42) {  // keeps 40 after the straggler
      ASSERT_TRUE(table.erase(kProducer | (c - 40)));
    }
  }
  EXPECT_EQ(table.overflow_size(), 1u);
  ASSERT_NE(table.find(straggler), nullptr);
  EXPECT_EQ(*table.find(straggler), 42u);
  EXPECT_EQ(table.size(), 41u);
  EXPECT_TRUE(table.erase(straggler));
  EXPECT_EQ(table.find(straggler), nullptr);
  EXPECT_FALSE(table.erase(straggler));
  EXPECT_EQ(table.overflow_size(), 0u);
  EXPECT_EQ(table.size(), 40u);
}

}  // namespace
// A latency goes to the first bucket whose upper bound holds it; past the
// last bound, to +Inf.
TEST(LatencyBuckets, ALatencyGoesToTheFirstBucketThatHoldsIt) {
  using B = rstorm::worker::LatencyBuckets;
  EXPECT_EQ(B::bucket_of(0), 0u);
  EXPECT_EQ(B::bucket_of(1'000), 0u);
  EXPECT_EQ(B::bucket_of(1'001), 1u);
  EXPECT_EQ(B::bucket_of(2'500), 1u);
  EXPECT_EQ(B::bucket_of(9'999'999), 12u);
  EXPECT_EQ(B::bucket_of(10'000'000), 12u);
  EXPECT_EQ(B::bucket_of(10'000'000'000), B::kBuckets - 2);
  EXPECT_EQ(B::bucket_of(10'000'000'001), B::kBuckets - 1);
  for (std::size_t i = 0; i < B::kUpperBoundsNs.size(); ++i) {
    EXPECT_EQ(B::bucket_of(B::kUpperBoundsNs[i]), i);
    EXPECT_EQ(B::bucket_of(B::kUpperBoundsNs[i] + 1), i + 1);
  }
  // Every power of two and its neighbours, and a spread of values between:
  // the bucket a search of the bounds finds.
  auto searched = [](std::uint64_t ns) {
    return static_cast<std::size_t>(
        std::lower_bound(B::kUpperBoundsNs.begin(), B::kUpperBoundsNs.end(), ns) -
        B::kUpperBoundsNs.begin());
  };
  std::vector<std::uint64_t> values{~std::uint64_t{0}};
  for (int k = 0; k < 64; ++k) {
    const std::uint64_t p = std::uint64_t{1} << k;
    values.insert(values.end(), {p - 1, p, p + 1, p + p / 3});
  }
  for (std::uint64_t ns = 1; ns < 20'000'000'000; ns = ns * 7 / 5 + 1) values.push_back(ns);
  for (std::uint64_t ns : values) ASSERT_EQ(B::bucket_of(ns), searched(ns)) << ns;
}

}  // namespace rstorm::worker

// One execute in a run is timed; the run grows for quick executes, so that
// the clock reads stay a small part of the time, and never past 1024.
TEST(BoltExecutorSampling, QuickExecutesAreTimedLessOften) {
  using rstorm::worker::BoltExecutor;
  EXPECT_EQ(BoltExecutor::sample_run_for(0), 32u);  // nothing timed yet
  EXPECT_EQ(BoltExecutor::sample_run_for(1'000'000), 32u);
  EXPECT_EQ(BoltExecutor::sample_run_for(200), 32u);
  EXPECT_EQ(BoltExecutor::sample_run_for(100), 64u);
  EXPECT_EQ(BoltExecutor::sample_run_for(40), 128u);
  EXPECT_EQ(BoltExecutor::sample_run_for(10), 512u);
  EXPECT_EQ(BoltExecutor::sample_run_for(1), 1024u);
  std::uint32_t last = 1024;
  for (std::uint64_t ns = 1; ns < 10'000; ns += 7) {
    const std::uint32_t run = BoltExecutor::sample_run_for(ns);
    EXPECT_EQ(run & (run - 1), 0u) << ns;  // a power of two: the place is drawn with a mask
    EXPECT_LE(run, last) << ns;            // longer executes, shorter runs
    last = run;
  }
}
