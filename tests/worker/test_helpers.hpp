// Spouts, bolts and polling shared by the runtime tests.
#pragma once

#include <spdlog/spdlog.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <rstorm/local_cluster.hpp>
#include <rstorm/rstorm.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tests/common/captured_log.hpp"
#include "tests/common/temp_dir.hpp"

namespace rstorm::testing {

// Polls `done` every 5 ms for up to 60 s. Never a fixed sleep.
template <typename F>
bool eventually(F done, std::chrono::seconds deadline = std::chrono::seconds(60)) {
  const auto end = std::chrono::steady_clock::now() + deadline;
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return done();
}

// What spouts and bolts saw, for assertions. Thread-safe.
struct Ledger {
  std::mutex mutex;
  std::map<std::int64_t, int> acks;
  std::map<std::int64_t, int> fails;
  std::map<std::int32_t, std::vector<Tuple>> received;  // task id -> tuples
  std::atomic<std::int64_t> max_in_flight{0};
  std::atomic<int> opened{0}, closed{0}, activated{0}, deactivated{0}, cleaned_up{0};

  std::size_t received_total() {
    std::lock_guard lock(mutex);
    std::size_t n = 0;
    for (const auto& [task, tuples] : received) n += tuples.size();
    return n;
  }
  std::size_t acked_total() {
    std::lock_guard lock(mutex);
    return acks.size();
  }
  std::size_t failed_total() {
    std::lock_guard lock(mutex);
    return fails.size();
  }
  // What a spout's ack(id) / fail(id) records for message id `id`.
  void record_ack(const Value& id) {
    std::lock_guard lock(mutex);
    ++acks[id.as_int()];
  }
  void record_fail(const Value& id) {
    std::lock_guard lock(mutex);
    ++fails[id.as_int()];
  }
};

// Emits `limit` tuples {n} (n = 0, 1, ...) with message id n when `reliable`,
// replays on fail when `replay`, and records acks and fails in the ledger.
class CountingSpout : public Spout {
 public:
  CountingSpout(std::shared_ptr<Ledger> ledger, std::int64_t limit, bool reliable,
                bool replay = false)
      : ledger_(std::move(ledger)), limit_(limit), reliable_(reliable), replay_(replay) {}

  void open(const Config&, const TopologyContext&, SpoutOutputCollector& c) override {
    out_ = &c;
    ++ledger_->opened;
  }
  void next_tuple() override {
    std::int64_t n;
    if (!to_replay_.empty()) {
      n = to_replay_.back();
      to_replay_.pop_back();
    } else if (next_ < limit_) {
      n = next_++;
    } else {
      return;
    }
    if (reliable_) {
      out_->emit({n}, n);
      ++in_flight_;
      if (in_flight_ > ledger_->max_in_flight.load()) ledger_->max_in_flight.store(in_flight_);
    } else {
      out_->emit({n});
    }
  }
  void ack(const Value& id) override {
    --in_flight_;
    ledger_->record_ack(id);
  }
  void fail(const Value& id) override {
    --in_flight_;
    if (replay_) to_replay_.push_back(id.as_int());
    ledger_->record_fail(id);
  }
  void activate() override { ++ledger_->activated; }
  void deactivate() override { ++ledger_->deactivated; }
  void close() override { ++ledger_->closed; }
  void declare_output_fields(OutputFieldsDeclarer& d) override { d.declare(Fields{"n"}); }

 private:
  std::shared_ptr<Ledger> ledger_;
  std::int64_t limit_;
  bool reliable_;
  bool replay_;
  SpoutOutputCollector* out_ = nullptr;
  std::int64_t next_ = 0;
  std::int64_t in_flight_ = 0;
  std::vector<std::int64_t> to_replay_;
};

// Records every input by task, then calls `on_tuple` (default: ack).
class RecordingBolt : public Bolt {
 public:
  using OnTuple = std::function<void(const Tuple&, OutputCollector&)>;
  RecordingBolt(std::shared_ptr<Ledger> ledger, OnTuple on_tuple = nullptr)
      : ledger_(std::move(ledger)), on_tuple_(std::move(on_tuple)) {}

  void prepare(const Config&, const TopologyContext& ctx, OutputCollector& c) override {
    out_ = &c;
    task_ = ctx.this_task();
  }
  void execute(const Tuple& t) override {
    {
      std::lock_guard lock(ledger_->mutex);
      ledger_->received[task_.value].push_back(t);
    }
    if (on_tuple_) {
      on_tuple_(t, *out_);
    } else {
      out_->ack(t);
    }
  }
  void cleanup() override { ++ledger_->cleaned_up; }
  void declare_output_fields(OutputFieldsDeclarer& d) override { d.declare(Fields{"n"}); }

 private:
  std::shared_ptr<Ledger> ledger_;
  OnTuple on_tuple_;
  OutputCollector* out_ = nullptr;
  TaskId task_;
};

inline SpoutFactory counting_spout(std::shared_ptr<Ledger> ledger, std::int64_t limit,
                                   bool reliable, bool replay = false) {
  return [=] { return std::make_unique<CountingSpout>(ledger, limit, reliable, replay); };
}

inline BoltFactory recording_bolt(std::shared_ptr<Ledger> ledger,
                                  RecordingBolt::OnTuple on_tuple = nullptr) {
  return [=] { return std::make_unique<RecordingBolt>(ledger, on_tuple); };
}

}  // namespace rstorm::testing
