// The runtime's building blocks on their own: the receive queue and the ack table.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "rstorm/worker/ack_table.hpp"
#include "rstorm/worker/receive_queue.hpp"

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

TEST(AckTable, MatchesAMapUnderRandomInsertsAndErases) {
  AckTable<std::uint64_t> table(16);
  std::map<std::uint64_t, std::uint64_t> model;
  std::mt19937_64 rng(42);
  for (int i = 0; i < 200000; ++i) {
    std::uint64_t key = rng() % 5000 + 1;
    const auto r = rng() % 6;
    if (r == 0) {
      EXPECT_EQ(table.erase(key), model.erase(key) == 1);
    } else if (r == 1) {
      auto* v = table.find(key);
      ASSERT_EQ(v != nullptr, model.count(key) == 1);
      if (v != nullptr) {
        table.erase_value(v);
        model.erase(key);
      }
    } else {
      table.get_or_insert(key) ^= i;
      model[key] ^= i;
    }
  }
  EXPECT_EQ(table.size(), model.size());
  for (const auto& [k, v] : model) {
    auto* found = table.find(k);
    ASSERT_NE(found, nullptr);
    ASSERT_EQ(*found, v);
  }
  std::size_t visited = 0;
  table.for_each([&](std::uint64_t, std::uint64_t&) { ++visited; });
  EXPECT_EQ(visited, model.size());
}

// Tree ids as spouts make them (a producer prefix in the high bits, a counter
// in the low ones), a window of them in flight, completing about in order:
// the table grows, wraps and keeps exactly the window.
TEST(AckTable, KeepsASlidingWindowOfConsecutiveTreeIds) {
  AckTable<std::uint64_t> table(16);
  constexpr std::uint64_t kPrefix = 0x00A7ull << 48;
  constexpr std::uint64_t kWindow = 3000;
  std::mt19937_64 rng(7);
  std::set<std::uint64_t> model;
  for (std::uint64_t n = 1; n <= 200000; ++n) {
    table.get_or_insert(kPrefix | n) = n;
    model.insert(kPrefix | n);
    if (model.size() > kWindow) {
      // Mostly the oldest, sometimes one a little younger.
      auto it = model.begin();
      std::advance(it, static_cast<long>(rng() % 4));
      ASSERT_TRUE(table.erase(*it)) << std::hex << *it;
      model.erase(it);
    }
  }
  EXPECT_EQ(table.size(), model.size());
  for (std::uint64_t key : model) {
    auto* v = table.find(key);
    ASSERT_NE(v, nullptr) << std::hex << key;
    EXPECT_EQ(*v, key & ~kPrefix);
  }
  EXPECT_EQ(table.find(kPrefix | 1), nullptr);
}

}  // namespace
}  // namespace rstorm::worker
