#include <algorithm>
#include <cstdio>
#include <sstream>

#include "top_words.hpp"

namespace rstorm::examples {
namespace {

constexpr std::int64_t kStartMs = 1'700'000'000'000;  // the stream's first timestamp

const std::vector<std::string>& vocabulary() {
  static const std::vector<std::string> kWords = {"storm", "stream", "tuple",  "bolt",
                                                  "spout", "window", "state",  "ack",
                                                  "rack",  "node",   "worker", "nimbus"};
  return kWords;
}

std::uint64_t mix(std::uint64_t x) {  // splitmix64's finaliser
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace

Click click(std::int64_t id, std::int64_t disorder_ms) {
  const std::uint64_t h = mix(static_cast<std::uint64_t>(id));
  // Skewed: u^2 over the vocabulary makes the first words the most frequent.
  const double u = static_cast<double>(h >> 11) / static_cast<double>(1ull << 53);
  const auto& words = vocabulary();
  const auto index = std::min(words.size() - 1, static_cast<std::size_t>(u * u * words.size()));
  const std::int64_t jitter =
      disorder_ms > 0
          ? static_cast<std::int64_t>(mix(h) % static_cast<std::uint64_t>(disorder_ms + 1))
          : 0;
  return Click{id, words[index], kStartMs + id * 10 - jitter};
}

Ranking top_of(const std::map<std::string, std::int64_t>& counts, std::size_t n) {
  Ranking all(counts.begin(), counts.end());
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  if (all.size() > n) all.resize(n);
  return all;
}

ClickSpout::ClickSpout(std::shared_ptr<TopWordsLedger> ledger) : ledger_(std::move(ledger)) {}

void ClickSpout::open(const Config& conf, const TopologyContext& context,
                      SpoutOutputCollector& collector) {
  out_ = &collector;
  limit_ = conf.get_int("topwords.events.limit", 0);
  disorder_ms_ = conf.get_int("topwords.disorder.ms", 400);
  checkpointed_ = conf.get_bool("topology.state.checkpointing", false);
  if (checkpointed_) {
    // A restore rewinds the stream to the checkpoint's barrier.
    position_ = context.key_value_state<std::string, std::int64_t>("position");
    next_ = position_.get("next", 0);
  }
}

void ClickSpout::next_tuple() {
  std::int64_t id;
  if (!replay_.empty()) {
    id = replay_.back();
    replay_.pop_back();
  } else if (limit_ == 0 || next_ < limit_) {
    id = next_++;
    if (checkpointed_) position_.put("next", next_);
  } else {
    if (outstanding_ == 0 || checkpointed_) out_->finish();
    return;
  }
  Click c = click(id, disorder_ms_);
  out_->emit({c.id, std::move(c.word), c.ts}, id);
  ++outstanding_;
}

void ClickSpout::ack(const Value& msg_id) {
  --outstanding_;
  if (!ledger_) return;
  std::lock_guard lock(ledger_->mutex);
  ++ledger_->acks[msg_id.as_int()];
}

void ClickSpout::fail(const Value& msg_id) {
  --outstanding_;
  // With checkpoints a lost click is replayed by the restore, not here.
  if (!checkpointed_) replay_.push_back(msg_id.as_int());
  if (!ledger_) return;
  std::lock_guard lock(ledger_->mutex);
  ++ledger_->fails[msg_id.as_int()];
}

void ClickSpout::declare_output_fields(OutputFieldsDeclarer& declarer) {
  declarer.declare(Fields{"id", "word", "ts"});
}

void WindowWordCounter::prepare(const Config&, const TopologyContext&, OutputCollector& collector) {
  out_ = &collector;
}

void WindowWordCounter::execute(const TupleWindow& window) {
  if (!counted_) {
    for (const Tuple* t : window.get()) ++counts_[t->get_string("word")];
    counted_ = true;
  } else {
    for (const Tuple* t : window.get_new()) ++counts_[t->get_string("word")];
    for (const Tuple* t : window.get_expired()) {
      auto it = counts_.find(t->get_string("word"));
      if (it != counts_.end() && --it->second == 0) counts_.erase(it);
    }
  }
  // Anchored to the window's clicks (no anchors given): acked with them.
  for (const auto& [word, count] : counts_) {
    out_->emit(Values{window.end_timestamp(), word, count});
  }
}

void WindowWordCounter::declare_output_fields(OutputFieldsDeclarer& declarer) {
  declarer.declare(Fields{"end", "word", "count"});
}

TopRanker::TopRanker(std::shared_ptr<TopWordsLedger> ledger) : ledger_(std::move(ledger)) {}

void TopRanker::prepare(const Config& conf, const TopologyContext& context) {
  top_ = static_cast<std::size_t>(std::max<std::int64_t>(1, conf.get_int("topwords.top", 3)));
  window_ms_ = conf.get_int("topwords.window.ms", 10000);
  print_ = conf.get_bool("topwords.print", true);
  context_ = &context;
  checkpointed_ = conf.get_bool("topology.state.checkpointing", false);
  if (!checkpointed_) return;
  kept_ = std::max<std::int64_t>(1, conf.get_int("topwords.rankings.kept", 1000));
  slide_ms_ = std::max<std::int64_t>(1, conf.get_int("topwords.slide.ms", 2000));
  rankings_ = context.key_value_state<std::int64_t, std::string>("rankings");
  merging_ = context.key_value_state<std::string, std::string>("merging");
  // What was being merged at the restored checkpoint: "end word count" and
  // "task end" lines.
  std::istringstream windows(merging_.get("windows", ""));
  std::int64_t end = 0, count = 0;
  for (std::string word; windows >> end >> word >> count;) windows_[end][word] = count;
  std::istringstream latest(merging_.get("latest", ""));
  std::int32_t task = 0;
  while (latest >> task >> end) latest_[task] = end;
}

void TopRanker::pre_checkpoint(std::int64_t) {
  if (!checkpointed_) return;
  std::string windows, latest;
  for (const auto& [end, counts] : windows_) {
    for (const auto& [word, count] : counts) {
      windows += std::to_string(end) + " " + word + " " + std::to_string(count) + "\n";
    }
  }
  for (const auto& [task, end] : latest_) {
    latest += std::to_string(task) + " " + std::to_string(end) + "\n";
  }
  merging_.put("windows", windows);
  merging_.put("latest", latest);
}

void TopRanker::execute(const Tuple& input, BasicOutputCollector&) {
  const std::int64_t end = input.get_int("end");
  auto& counts = windows_[end];
  counts[input.get_string("word")] = input.get_int("count");
  if (ledger_) {
    std::lock_guard lock(ledger_->mutex);
    ledger_->rankings[end] = top_of(counts, top_);
  }
  // A counter activates its windows in order (skipping empty ones) and sends
  // a window's words one after the other, so once every counter has sent a
  // later window, all of a window is here.
  std::int64_t& latest = latest_[input.source_task().value];
  latest = std::max(latest, end);
  std::int64_t complete = latest;
  for (TaskId t : context_->component_tasks(input.source_component())) {
    auto it = latest_.find(t.value);
    complete = std::min(complete, it == latest_.end() ? 0 : it->second);
  }
  while (!windows_.empty() && windows_.begin()->first < complete) {
    this->complete(windows_.begin()->first);
    windows_.erase(windows_.begin());
  }
}

void TopRanker::complete(std::int64_t end) {
  print(end);
  if (!checkpointed_) return;
  rankings_.put(end, ranking_text(top_of(windows_[end], top_)));
  rankings_.remove(end - kept_ * slide_ms_);
}

std::string ranking_text(const Ranking& ranking) {
  std::string line;
  for (const auto& [word, count] : ranking) {
    line += (line.empty() ? "" : ", ") + word + "=" + std::to_string(count);
  }
  return line;
}

void TopRanker::print(std::int64_t end) {
  if (!print_) return;
  const std::string line = ranking_text(top_of(windows_[end], top_));
  std::printf("window [%lld, %lld): %s\n", static_cast<long long>(end - window_ms_),
              static_cast<long long>(end), line.c_str());
  std::fflush(stdout);
}

void TopRanker::cleanup() {
  for (const auto& [end, counts] : windows_) print(end);
}

void TopRanker::declare_output_fields(OutputFieldsDeclarer&) {}

LateClicks::LateClicks(std::shared_ptr<TopWordsLedger> ledger) : ledger_(std::move(ledger)) {}

void LateClicks::prepare(const Config&, const TopologyContext& context) {
  late_ = &context.counter("late_clicks_total", "Clicks that came behind the watermark");
}

void LateClicks::execute(const Tuple& input, BasicOutputCollector&) {
  late_->inc();
  if (!ledger_) return;
  std::lock_guard lock(ledger_->mutex);
  ledger_->late.insert(input.get_int("id"));
}

api::Result<Topology> build_top_words(const Config& config,
                                      std::shared_ptr<TopWordsLedger> ledger) {
  TopologyBuilder b;
  b.set_spout("clicks", [ledger] { return std::make_unique<ClickSpout>(ledger); });
  b.set_bolt(
       "count", [] { return std::make_unique<WindowWordCounter>(); }, 2)
      .fields_grouping("clicks", Fields{"word"})
      .with_window(Duration(config.get_int("topwords.window.ms", 10000)),
                   Duration(config.get_int("topwords.slide.ms", 2000)))
      .with_timestamp_field("ts")
      .with_lag(config.get_int("topwords.lag.ms", 500))
      .with_late_tuple_stream("late");
  b.set_bolt("rank", [ledger] {
     return std::make_unique<TopRanker>(ledger);
   }).global_grouping("count");
  b.set_bolt("late", [ledger] {
     return std::make_unique<LateClicks>(ledger);
   }).global_grouping("count", "late");
  return b.build();
}

}  // namespace rstorm::examples
