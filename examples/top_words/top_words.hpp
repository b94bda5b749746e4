// Top words per sliding window, in event time: a spout replays a stream of
// clicks (id, word, ts) whose timestamps are out of order by up to
// topwords.disorder.ms; a windowed bolt, fields-grouped on the word, counts
// each word over a sliding event-time window (kept up to date from what
// entered and what left the window, not recounted); a ranker merges the
// counters' results into the top words of each window. Clicks behind the
// watermark go to the late stream and are counted.
//
// Config keys:
//   topwords.events.limit   emit this many clicks then stop (default 0: forever)
//   topwords.window.ms      window length, event time (default 10000)
//   topwords.slide.ms       window slide (default 2000)
//   topwords.lag.ms         watermark lag (default 500)
//   topwords.disorder.ms    how far out of order a click may be (default 400)
//   topwords.top            words per ranking (default 3)
//   topwords.print          print rankings as windows complete (default true)
//
// With topology.state.checkpointing the results are exactly once through
// failures: the spout keeps its position in keyed state ("position"), the
// counters' windows are checkpointed with them, and the ranker keeps the
// rankings of complete windows in keyed state ("rankings": window end ->
// "word=count, ..."; the newest topwords.rankings.kept, default 1000), with
// what it is still merging written at each checkpoint (pre_checkpoint).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <rstorm/rstorm.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace rstorm::examples {

// A ranking: (word, count), the largest count first, ties by word.
using Ranking = std::vector<std::pair<std::string, std::int64_t>>;

// What the topology records for whoever watches it (tests). Thread-safe.
struct TopWordsLedger {
  std::mutex mutex;
  std::map<std::int64_t, int> acks;          // click id -> times acked
  std::map<std::int64_t, int> fails;         // click id -> times failed
  std::map<std::int64_t, Ranking> rankings;  // window end (ms) -> top words
  std::set<std::int64_t> late;               // ids of clicks that came late
};

struct Click {
  std::int64_t id;
  std::string word;
  std::int64_t ts;  // ms
};

// The id-th click of the stream: the same for every run. Timestamps advance
// 10 ms per click from a fixed start, less up to `disorder_ms`.
Click click(std::int64_t id, std::int64_t disorder_ms);

// The top `n` of `counts`.
Ranking top_of(const std::map<std::string, std::int64_t>& counts, std::size_t n);

class ClickSpout : public Spout {
 public:
  explicit ClickSpout(std::shared_ptr<TopWordsLedger> ledger = nullptr);
  void open(const Config& conf, const TopologyContext& context,
            SpoutOutputCollector& collector) override;
  void next_tuple() override;
  void ack(const Value& msg_id) override;
  void fail(const Value& msg_id) override;
  void declare_output_fields(OutputFieldsDeclarer& declarer) override;

 private:
  std::shared_ptr<TopWordsLedger> ledger_;
  SpoutOutputCollector* out_ = nullptr;
  std::int64_t limit_ = 0;
  std::int64_t disorder_ms_ = 400;
  std::int64_t next_ = 0;
  std::vector<std::int64_t> replay_;
  std::int64_t outstanding_ = 0;
  bool checkpointed_ = false;
  KeyValueState<std::string, std::int64_t> position_;
};

// Counts each word of its share over the window; emits (end, word, count) for
// every word in the window at each activation.
class WindowWordCounter : public WindowedBolt {
 public:
  void prepare(const Config& conf, const TopologyContext& context,
               OutputCollector& collector) override;
  void execute(const TupleWindow& window) override;
  void declare_output_fields(OutputFieldsDeclarer& declarer) override;

 private:
  OutputCollector* out_ = nullptr;
  // The window's words, kept from what enters and leaves; counted from the
  // whole window at the first activation (after a restore too).
  std::map<std::string, std::int64_t> counts_;
  bool counted_ = false;
};

// Merges the counters' results per window end and keeps the top words; a
// window's ranking is printed once every counter has sent a later one.
class TopRanker : public BasicBolt {
 public:
  explicit TopRanker(std::shared_ptr<TopWordsLedger> ledger = nullptr);
  void prepare(const Config& conf, const TopologyContext& context) override;
  void execute(const Tuple& input, BasicOutputCollector& out) override;
  void cleanup() override;
  void declare_output_fields(OutputFieldsDeclarer& declarer) override;
  // Writes the windows still being merged to keyed state.
  void pre_checkpoint(std::int64_t checkpoint) override;

 private:
  void print(std::int64_t end);
  // A window every counter moved past: ranked, printed, kept.
  void complete(std::int64_t end);

  std::shared_ptr<TopWordsLedger> ledger_;
  std::size_t top_ = 3;
  std::int64_t window_ms_ = 10000;
  bool print_ = true;
  const TopologyContext* context_ = nullptr;
  std::map<std::int64_t, std::map<std::string, std::int64_t>> windows_;  // end -> counts
  std::map<std::int32_t, std::int64_t> latest_;  // counter task -> newest window end it sent
  bool checkpointed_ = false;
  std::int64_t kept_ = 1000;
  std::int64_t slide_ms_ = 2000;
  KeyValueState<std::int64_t, std::string> rankings_;  // window end -> ranking
  KeyValueState<std::string, std::string> merging_;    // windows_ and latest_ at a checkpoint
};

// A ranking as the ranker prints and keeps it: "word=count, word=count".
std::string ranking_text(const Ranking& ranking);

// Counts the clicks that came behind the watermark.
class LateClicks : public BasicBolt {
 public:
  explicit LateClicks(std::shared_ptr<TopWordsLedger> ledger = nullptr);
  void prepare(const Config& conf, const TopologyContext& context) override;
  void execute(const Tuple& input, BasicOutputCollector& out) override;
  void declare_output_fields(OutputFieldsDeclarer&) override {}

 private:
  std::shared_ptr<TopWordsLedger> ledger_;
  CounterMetric* late_ = nullptr;
};

// clicks (spout) -> count (windowed, 2, fields on word) -> rank (global);
// count's late stream -> late (global). `config` gives the window settings.
api::Result<Topology> build_top_words(const Config& config,
                                      std::shared_ptr<TopWordsLedger> ledger = nullptr);

}  // namespace rstorm::examples
