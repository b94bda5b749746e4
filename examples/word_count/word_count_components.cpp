#include <algorithm>
#include <cstdio>

#include "word_count.hpp"

namespace rstorm::examples {

const std::vector<std::string>& word_count_sentences() {
  static const std::vector<std::string> kSentences = {
      "the cow jumped over the moon",
      "an apple a day keeps the doctor away",
      "four score and seven years ago",
      "snow white and the seven dwarfs",
      "i am at two with nature",
  };
  return kSentences;
}

SentenceSpout::SentenceSpout(std::shared_ptr<WordCountLedger> ledger)
    : ledger_(std::move(ledger)) {}

void SentenceSpout::open(const Config& conf, const TopologyContext& context,
                         SpoutOutputCollector& collector) {
  out_ = &collector;
  limit_ = conf.get_int("wordcount.sentences.limit", 0);
  checkpointed_ = conf.get_bool("topology.state.checkpointing", false);
  if (checkpointed_) {
    // The next sentence is state: a restored checkpoint rewinds it to where
    // the spout was at that checkpoint's barrier, and the sentences after it
    // are emitted again, into counts restored to the same point.
    position_ = context.key_value_state<std::string, std::int64_t>("position");
    next_ = position_.get("next", 0);
  }
}

void SentenceSpout::next_tuple() {
  std::int64_t id;
  if (!replay_.empty()) {
    id = replay_.back();
    replay_.pop_back();
  } else if (limit_ == 0 || next_ < limit_) {
    id = next_++;
    if (checkpointed_) position_.put("next", next_);
  } else {
    // Finite input done: once every sentence is acked, nothing is left to replay.
    if (outstanding_ == 0 || checkpointed_) out_->finish();
    return;
  }
  const auto& sentences = word_count_sentences();
  out_->emit({sentences[static_cast<std::size_t>(id) % sentences.size()]}, id);
  ++outstanding_;
}

void SentenceSpout::ack(const Value& msg_id) {
  --outstanding_;
  if (!ledger_) return;
  std::lock_guard lock(ledger_->mutex);
  ++ledger_->acks[msg_id.as_int()];
}

void SentenceSpout::fail(const Value& msg_id) {
  --outstanding_;
  // With checkpoints a tuple lost with a worker is replayed by the restore,
  // not here (a replay could count it twice). A tree that fails while every
  // worker lives (a bolt threw, a timeout) restores nothing: its sentence is
  // not counted (README, "Checkpoints": limits).
  if (!checkpointed_) replay_.push_back(msg_id.as_int());
  if (!ledger_) return;
  std::lock_guard lock(ledger_->mutex);
  ++ledger_->fails[msg_id.as_int()];
}

void SentenceSpout::declare_output_fields(OutputFieldsDeclarer& declarer) {
  declarer.declare(Fields{"sentence"});
}

void SplitSentence::prepare(const Config&, const TopologyContext& context) {
  words_ = &context.counter("words_split_total", "Words split out of sentences");
  sentence_words_ = &context.histogram("sentence_words", {4, 6, 8, 16}, "Words per sentence");
}

void SplitSentence::execute(const Tuple& input, BasicOutputCollector& out) {
  const std::string& sentence = input.get_string("sentence");
  std::size_t start = 0;
  std::uint64_t words = 0;
  while (start < sentence.size()) {
    std::size_t end = sentence.find(' ', start);
    if (end == std::string::npos) end = sentence.size();
    if (end > start) {
      out.emit({sentence.substr(start, end - start)});
      ++words;
    }
    start = end + 1;
  }
  if (words_ != nullptr) words_->inc(words);
  if (sentence_words_ != nullptr) sentence_words_->observe(static_cast<double>(words));
}

void SplitSentence::declare_output_fields(OutputFieldsDeclarer& declarer) {
  declarer.declare(Fields{"word"});
}

void WordCounter::execute(const Tuple& input, BasicOutputCollector& out) {
  const std::string& word = input.get_string("word");
  std::int64_t count = ++counts_[word];
  out.emit({word, count});
}

void WordCounter::declare_output_fields(OutputFieldsDeclarer& declarer) {
  declarer.declare(Fields{"word", "count"});
}

void StatefulWordCounter::prepare(const Config&, const TopologyContext& context) {
  counts_ = context.key_value_state<std::string, std::int64_t>("counts");
}

void StatefulWordCounter::execute(const Tuple& input, BasicOutputCollector& out) {
  const std::string& word = input.get_string("word");
  const std::int64_t count = counts_.get(word, 0) + 1;
  counts_.put(word, count);
  out.emit({word, count});
}

void StatefulWordCounter::declare_output_fields(OutputFieldsDeclarer& declarer) {
  declarer.declare(Fields{"word", "count"});
}

ReportBolt::ReportBolt(std::shared_ptr<WordCountLedger> ledger) : ledger_(std::move(ledger)) {}

void ReportBolt::prepare(const Config& conf, const TopologyContext&) {
  print_ = conf.get_bool("wordcount.report.print", true);
  top_ = static_cast<std::size_t>(std::max<std::int64_t>(0, conf.get_int("wordcount.report.top", 8)));
}

void ReportBolt::execute(const Tuple& input, BasicOutputCollector&) {
  const std::string& word = input.get_string("word");
  const std::int64_t count = input.get_int("count");
  std::int64_t& latest = counts_[word];
  latest = std::max(latest, count);
  if (!ledger_) return;
  std::lock_guard lock(ledger_->mutex);
  std::int64_t& shared = ledger_->counts[word];
  shared = std::max(shared, count);
}

void ReportBolt::cleanup() {
  if (!print_ || counts_.empty()) return;
  std::vector<std::pair<std::int64_t, std::string>> top;
  for (const auto& [word, count] : counts_) top.emplace_back(count, word);
  std::sort(top.rbegin(), top.rend());
  std::string line;
  for (std::size_t i = 0; i < top.size() && i < top_; ++i) {
    line += (i ? ", " : "") + top[i].second + "=" + std::to_string(top[i].first);
  }
  std::printf("word count report: %zu distinct words; top: %s\n", counts_.size(), line.c_str());
  std::fflush(stdout);
}

namespace {

template <typename Counter>
api::Result<Topology> build_counting(std::shared_ptr<WordCountLedger> ledger) {
  TopologyBuilder b;
  b.set_spout("sentences", [ledger] { return std::make_unique<SentenceSpout>(ledger); }, 1);
  b.set_bolt("split", [] { return std::make_unique<SplitSentence>(); }, 2)
      .shuffle_grouping("sentences");
  b.set_bolt("count", [] { return std::make_unique<Counter>(); }, 2)
      .fields_grouping("split", Fields{"word"});
  b.set_bolt("report", [ledger] { return std::make_unique<ReportBolt>(ledger); }, 1)
      .global_grouping("count");
  return b.build();
}

}  // namespace

api::Result<Topology> build_word_count(std::shared_ptr<WordCountLedger> ledger) {
  return build_counting<WordCounter>(std::move(ledger));
}

api::Result<Topology> build_stateful_word_count(std::shared_ptr<WordCountLedger> ledger) {
  return build_counting<StatefulWordCounter>(std::move(ledger));
}

}  // namespace rstorm::examples
