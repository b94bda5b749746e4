// Word count, the classic Storm example: a spout cycles through sentences, a
// bolt splits them into words, a fields-grouped bolt counts each word, and a
// global report bolt keeps the latest count of every word.
//
// Config keys:
//   wordcount.sentences.limit  emit this many sentences then stop (default 0:
//                              forever); tuples are reliable and replayed on fail
//   wordcount.report.print     print the top words when the report bolt stops
//                              (default true)
//   wordcount.report.top       how many words that line names (default 8)
//   topology.state.checkpointing  (Storm-style key) the spout keeps its position
//                              in keyed state "position" (key "next") and does not
//                              replay failed sentences itself: a restored
//                              checkpoint replays them (exactly once with
//                              stateful_word_count)
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <rstorm/rstorm.hpp>

namespace rstorm::examples {

// What the word count records for whoever watches it (tests). Thread-safe.
struct WordCountLedger {
  std::mutex mutex;
  std::map<std::int64_t, int> acks;   // message id -> times acked
  std::map<std::int64_t, int> fails;  // message id -> times failed
  std::map<std::string, std::int64_t> counts;  // latest count per word (report bolt)
};

// The sentences the spout cycles through.
const std::vector<std::string>& word_count_sentences();

class SentenceSpout : public Spout {
 public:
  explicit SentenceSpout(std::shared_ptr<WordCountLedger> ledger = nullptr);
  void open(const Config& conf, const TopologyContext& context,
            SpoutOutputCollector& collector) override;
  void next_tuple() override;
  void ack(const Value& msg_id) override;
  void fail(const Value& msg_id) override;
  void declare_output_fields(OutputFieldsDeclarer& declarer) override;

 private:
  std::shared_ptr<WordCountLedger> ledger_;
  SpoutOutputCollector* out_ = nullptr;
  std::int64_t limit_ = 0;
  std::int64_t next_ = 0;
  std::vector<std::int64_t> replay_;
  std::int64_t outstanding_ = 0;  // emitted, not yet acked or failed
  // topology.state.checkpointing: the position is keyed state.
  bool checkpointed_ = false;
  KeyValueState<std::string, std::int64_t> position_;
};

// Also keeps two user metrics (rstorm/metrics.hpp): the counter
// words_split_total and the histogram sentence_words (words per sentence).
class SplitSentence : public BasicBolt {
 public:
  void prepare(const Config& conf, const TopologyContext& context) override;
  void execute(const Tuple& input, BasicOutputCollector& out) override;
  void declare_output_fields(OutputFieldsDeclarer& declarer) override;

 private:
  CounterMetric* words_ = nullptr;
  HistogramMetric* sentence_words_ = nullptr;
};

class WordCounter : public BasicBolt {
 public:
  void execute(const Tuple& input, BasicOutputCollector& out) override;
  void declare_output_fields(OutputFieldsDeclarer& declarer) override;

 private:
  std::map<std::string, std::int64_t> counts_;
};

// WordCounter with its counts in the task's keyed state (rstorm/state.hpp):
// in memory in local mode, in RocksDB under the worker's folder on a cluster
// (topology.state.provider), where a restarted worker finds them again.
class StatefulWordCounter : public BasicBolt {
 public:
  void prepare(const Config& conf, const TopologyContext& context) override;
  void execute(const Tuple& input, BasicOutputCollector& out) override;
  void declare_output_fields(OutputFieldsDeclarer& declarer) override;

 private:
  KeyValueState<std::string, std::int64_t> counts_;
};

class ReportBolt : public BasicBolt {
 public:
  explicit ReportBolt(std::shared_ptr<WordCountLedger> ledger = nullptr);
  void prepare(const Config& conf, const TopologyContext& context) override;
  void execute(const Tuple& input, BasicOutputCollector& out) override;
  void cleanup() override;
  void declare_output_fields(OutputFieldsDeclarer&) override {}

 private:
  std::shared_ptr<WordCountLedger> ledger_;
  std::map<std::string, std::int64_t> counts_;
  bool print_ = true;
  std::size_t top_ = 8;
};

// sentences (1) -> split (2, shuffle) -> count (2, fields "word") -> report (1, global).
api::Result<Topology> build_word_count(std::shared_ptr<WordCountLedger> ledger = nullptr);

// The same with StatefulWordCounter as "count".
api::Result<Topology> build_stateful_word_count(std::shared_ptr<WordCountLedger> ledger = nullptr);

}  // namespace rstorm::examples
