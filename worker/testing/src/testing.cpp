#include "rstorm/testing.hpp"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "rstorm/worker/topology_runtime.hpp"

namespace rstorm::testing {
namespace {

// Every emit and error of a run, from every executor thread.
class Recorder {
 public:
  void emitted(const std::string& component, TaskId task, std::string_view stream, const Values& values) {
    std::lock_guard lock(mutex_);
    by_task_[component][task.value].push_back({std::string(stream), values, task.value});
  }
  void error(const std::string& component, std::string message) {
    std::lock_guard lock(mutex_);
    errors_[component].push_back(std::move(message));
  }
  void fill(CompletedTopology& out) {
    std::lock_guard lock(mutex_);
    for (auto& [component, tasks] : by_task_) {
      auto& list = out.emitted_[component];
      for (auto& [task, tuples] : tasks) {
        for (auto& t : tuples) list.push_back(std::move(t));
      }
    }
    for (auto& [component, messages] : errors_) out.errors_[component] = std::move(messages);
  }

 private:
  std::mutex mutex_;
  std::map<std::string, std::map<int, std::vector<EmittedTuple>>> by_task_;
  std::map<std::string, std::vector<std::string>> errors_;
};

class RecordingSpoutCollector final : public SpoutOutputCollector {
 public:
  RecordingSpoutCollector(SpoutOutputCollector& out, Recorder& recorder, const TopologyContext& context)
      : out_(out), recorder_(recorder), component_(context.component_id()), task_(context.this_task()) {}
  void emit_to(std::string_view stream, Values&& values, Value msg_id, TaskId direct_task) override {
    recorder_.emitted(component_, task_, stream, values);
    out_.emit_to(stream, std::move(values), std::move(msg_id), direct_task);
  }
  void report_error(std::string_view message) override {
    recorder_.error(component_, std::string(message));
    out_.report_error(message);
  }
  void finish() override { out_.finish(); }

 private:
  SpoutOutputCollector& out_;
  Recorder& recorder_;
  std::string component_;
  TaskId task_;
};

class RecordingCollector final : public OutputCollector {
 public:
  RecordingCollector(OutputCollector& out, Recorder& recorder, const TopologyContext& context)
      : out_(out), recorder_(recorder), component_(context.component_id()), task_(context.this_task()) {}
  void emit_to(std::string_view stream, const Tuple* const* anchors, std::size_t num_anchors,
               Values&& values, TaskId direct_task) override {
    recorder_.emitted(component_, task_, stream, values);
    out_.emit_to(stream, anchors, num_anchors, std::move(values), direct_task);
  }
  void ack(const Tuple& input) override { out_.ack(input); }
  void fail(const Tuple& input) override { out_.fail(input); }
  void report_error(std::string_view message) override {
    recorder_.error(component_, std::string(message));
    out_.report_error(message);
  }

 private:
  OutputCollector& out_;
  Recorder& recorder_;
  std::string component_;
  TaskId task_;
};

// The user's spout, its emits recorded.
class RecordingSpout final : public Spout {
 public:
  RecordingSpout(std::unique_ptr<Spout> spout, std::shared_ptr<Recorder> recorder)
      : spout_(std::move(spout)), recorder_(std::move(recorder)) {}
  void open(const Config& conf, const TopologyContext& context, SpoutOutputCollector& collector) override {
    collector_ = std::make_unique<RecordingSpoutCollector>(collector, *recorder_, context);
    component_ = context.component_id();
    spout_->open(conf, context, *collector_);
  }
  void next_tuple() override { guarded([&] { spout_->next_tuple(); }); }
  void ack(const Value& msg_id) override { spout_->ack(msg_id); }
  void fail(const Value& msg_id) override { spout_->fail(msg_id); }
  void activate() override { spout_->activate(); }
  void deactivate() override { spout_->deactivate(); }
  void close() override { spout_->close(); }
  void declare_output_fields(OutputFieldsDeclarer& declarer) override { spout_->declare_output_fields(declarer); }

 private:
  template <typename F>
  void guarded(F&& f) {
    try {
      f();
    } catch (const std::exception& e) {
      recorder_->error(component_, e.what());
      throw;
    } catch (...) {
      recorder_->error(component_, "a non-standard exception");
      throw;
    }
  }
  std::unique_ptr<Spout> spout_;
  std::shared_ptr<Recorder> recorder_;
  std::unique_ptr<RecordingSpoutCollector> collector_;
  std::string component_;
};

// The user's bolt, its emits and errors recorded, run as the runtime runs it
// unwrapped: a TimedBolt keeps its timer (a time window's activations) and
// pre_checkpoint reaches it. `Base`: Bolt, or TimedBolt for a timed one.
template <typename Base>
class RecordingBolt : public Base {
 public:
  RecordingBolt(std::unique_ptr<Bolt> bolt, std::shared_ptr<Recorder> recorder)
      : bolt_(std::move(bolt)), recorder_(std::move(recorder)) {}
  void prepare(const Config& conf, const TopologyContext& context, OutputCollector& collector) override {
    collector_ = std::make_unique<RecordingCollector>(collector, *recorder_, context);
    component_ = context.component_id();
    bolt_->prepare(conf, context, *collector_);
  }
  void execute(const Tuple& input) override {
    recorded([&] { bolt_->execute(input); });
  }
  void cleanup() override { bolt_->cleanup(); }
  void pre_checkpoint(std::int64_t checkpoint) override { bolt_->pre_checkpoint(checkpoint); }
  void declare_output_fields(OutputFieldsDeclarer& declarer) override { bolt_->declare_output_fields(declarer); }

 protected:
  template <typename F>
  void recorded(F&& f) {
    try {
      f();
    } catch (const std::exception& e) {
      recorder_->error(component_, e.what());
      throw;
    } catch (...) {
      recorder_->error(component_, "a non-standard exception");
      throw;
    }
  }
  std::unique_ptr<Bolt> bolt_;
  std::shared_ptr<Recorder> recorder_;
  std::unique_ptr<RecordingCollector> collector_;
  std::string component_;
};

class RecordingTimedBolt final : public RecordingBolt<TimedBolt> {
 public:
  using RecordingBolt<TimedBolt>::RecordingBolt;
  std::chrono::milliseconds timer_period() const override {
    return static_cast<const TimedBolt&>(*bolt_).timer_period();
  }
  void on_timer() override {
    recorded([&] { static_cast<TimedBolt&>(*bolt_).on_timer(); });
  }
};

std::unique_ptr<Bolt> recording_bolt(std::unique_ptr<Bolt> bolt, std::shared_ptr<Recorder> recorder) {
  if (dynamic_cast<TimedBolt*>(bolt.get()) != nullptr) {
    return std::make_unique<RecordingTimedBolt>(std::move(bolt), std::move(recorder));
  }
  return std::make_unique<RecordingBolt<Bolt>>(std::move(bolt), std::move(recorder));
}

// Emits its share of the mocked tuples, each once, then finishes.
class MockedSpout final : public Spout {
 public:
  MockedSpout(std::shared_ptr<const std::vector<std::pair<std::string, Values>>> tuples,
              std::shared_ptr<Recorder> recorder)
      : tuples_(std::move(tuples)), recorder_(std::move(recorder)) {}
  void open(const Config&, const TopologyContext& context, SpoutOutputCollector& collector) override {
    collector_ = std::make_unique<RecordingSpoutCollector>(collector, *recorder_, context);
    next_ = static_cast<std::size_t>(context.this_task_index());
    step_ = std::max<std::size_t>(1, context.this_component_tasks().size());
  }
  void next_tuple() override {
    if (next_ < tuples_->size()) {
      const auto& [stream, values] = (*tuples_)[next_];
      collector_->emit_to(stream, Values(values), Value(static_cast<std::int64_t>(next_)), TaskId());
      next_ += step_;
      ++outstanding_;
    } else if (outstanding_ == 0 && !finished_) {
      finished_ = true;
      collector_->finish();
    }
  }
  void ack(const Value&) override { --outstanding_; }
  void fail(const Value&) override { --outstanding_; }
  void declare_output_fields(OutputFieldsDeclarer&) override {}  // the spec has the streams

 private:
  std::shared_ptr<const std::vector<std::pair<std::string, Values>>> tuples_;
  std::shared_ptr<Recorder> recorder_;
  std::unique_ptr<RecordingSpoutCollector> collector_;
  std::size_t next_ = 0;
  std::size_t step_ = 1;
  std::int64_t outstanding_ = 0;
  bool finished_ = false;
};

const std::vector<std::string> kNoErrors;
const std::vector<EmittedTuple> kNoTuples;

}  // namespace

std::vector<Values> CompletedTopology::emitted(std::string_view component, std::string_view stream) const {
  std::vector<Values> out;
  for (const auto& t : emitted_tuples(component)) {
    if (t.stream == stream) out.push_back(t.values);
  }
  return out;
}

const std::vector<EmittedTuple>& CompletedTopology::emitted_tuples(std::string_view component) const {
  auto it = emitted_.find(component);
  return it == emitted_.end() ? kNoTuples : it->second;
}

std::uint64_t CompletedTopology::acked(std::string_view component) const {
  auto it = counters_.find(component);
  return it == counters_.end() ? 0 : it->second.acked;
}

std::uint64_t CompletedTopology::failed(std::string_view component) const {
  auto it = counters_.find(component);
  return it == counters_.end() ? 0 : it->second.failed;
}

std::uint64_t CompletedTopology::executed(std::string_view component) const {
  auto it = counters_.find(component);
  return it == counters_.end() ? 0 : it->second.executed;
}

double CompletedTopology::metric(std::string_view component, std::string_view name) const {
  auto it = metrics_.find(std::make_pair(std::string(component), std::string(name)));
  return it == metrics_.end() ? 0 : it->second;
}

const std::vector<std::string>& CompletedTopology::errors(std::string_view component) const {
  auto it = errors_.find(component);
  return it == errors_.end() ? kNoErrors : it->second;
}

api::Result<CompletedTopology> complete_topology(const Topology& topology,
                                                 const CompleteTopologyOptions& options) {
  std::vector<std::string> problems;
  for (const auto& [spout, tuples] : options.mocked_sources.by_spout()) {
    const ComponentSpec* c = topology.component(spout);
    if (c == nullptr || c->kind != ComponentKind::kSpout) {
      problems.push_back("mocked source '" + spout + "' names no spout of the topology" +
                         (c != nullptr ? " ('" + spout + "' is a bolt)" : ""));
      continue;
    }
    for (const auto& [stream, values] : tuples) {
      const StreamSpec* s = c->find_stream(stream);
      if (s == nullptr) {
        problems.push_back("mocked source '" + spout + "': spout '" + spout + "' declares no stream '" +
                           stream + "'");
        break;
      }
      if (values.size() != s->fields.size()) {
        problems.push_back("mocked source '" + spout + "': a tuple of " + std::to_string(values.size()) +
                           " values for stream '" + stream + "', which has " +
                           std::to_string(s->fields.size()) + " fields");
        break;
      }
    }
  }
  if (!problems.empty()) return api::Status::errors(std::move(problems));

  auto recorder = std::make_shared<Recorder>();
  std::map<std::string, SpoutFactory, std::less<>> spouts;
  std::map<std::string, BoltFactory, std::less<>> bolts;
  for (const auto& c : topology.components()) {
    const std::string id = c.id;
    if (c.kind == ComponentKind::kSpout) {
      auto mocked = options.mocked_sources.by_spout().find(id);
      if (mocked != options.mocked_sources.by_spout().end()) {
        auto tuples = std::make_shared<const std::vector<std::pair<std::string, Values>>>(mocked->second);
        spouts[id] = [tuples, recorder] { return std::make_unique<MockedSpout>(tuples, recorder); };
      } else {
        spouts[id] = [topology, id, recorder]() -> std::unique_ptr<Spout> {
          auto spout = topology.create_spout(id);
          if (!spout) return nullptr;
          return std::make_unique<RecordingSpout>(std::move(spout), recorder);
        };
      }
    } else {
      bolts[id] = [topology, id, recorder]() -> std::unique_ptr<Bolt> {
        auto bolt = topology.create_bolt(id);
        if (!bolt) return nullptr;
        return recording_bolt(std::move(bolt), recorder);
      };
    }
  }
  const Topology recorded(topology.spec(), std::move(spouts), std::move(bolts));

  static std::atomic<int> runs{0};
  const std::string name = "complete-topology-" + std::to_string(++runs);
  auto logger = std::make_shared<spdlog::logger>("complete_topology",
                                                 std::make_shared<spdlog::sinks::stderr_sink_mt>());
  std::random_device rd;
  auto created = worker::TopologyRuntime::create(name, options.config, recorded, logger,
                                                 (static_cast<std::uint64_t>(rd()) << 32) ^ rd());
  if (!created.ok()) return api::Status::error("cannot run the topology: " + created.status().message());
  std::unique_ptr<worker::TopologyRuntime> runtime = std::move(created).value();
  runtime->start();
  const auto deadline = std::chrono::steady_clock::now() + options.timeout;
  std::string failure;
  bool complete = false;
  while (std::chrono::steady_clock::now() < deadline) {
    failure = runtime->fatal_error();
    if (!failure.empty()) break;
    if (runtime->spouts_finished() && runtime->in_flight() == 0) {
      complete = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  const std::uint64_t in_flight = runtime->in_flight();
  const bool spouts_done = runtime->spouts_finished();
  const std::vector<std::string> unfinished = runtime->unfinished_spouts();
  runtime->deactivate();
  runtime->stop();
  if (!failure.empty()) return api::Status::error("the topology cannot run: " + failure);
  if (!complete) {
    std::string names;
    for (const auto& id : unfinished) names += (names.empty() ? "'" : ", '") + id + "'";
    std::string what =
        spouts_done ? "every spout finished"
                    : "spout " + names +
                          " has not finished (a spout that is not mocked must call "
                          "SpoutOutputCollector::finish)";
    return api::Status::error("the topology did not complete within " + std::to_string(options.timeout.count()) +
                              " ms: " + what + ", " + std::to_string(in_flight) + " tuple trees in flight");
  }
  CompletedTopology out;
  for (const auto& c : runtime->stats().components) {
    if (c.is_system) continue;
    out.counters_[c.id] = {c.acked, c.failed, c.executed};
  }
  recorder->fill(out);
  for (const auto& m : runtime->plan().user_metrics->entries()) {
    double& v = out.metrics_[{m.component, m.name}];
    switch (m.kind) {
      case MetricKind::kCounter:
        v += static_cast<double>(m.counter->value());
        break;
      case MetricKind::kGauge:
        v += m.gauge->value();
        break;
      case MetricKind::kHistogram:
        v += static_cast<double>(m.histogram->count());
        break;
    }
  }
  return out;
}

}  // namespace rstorm::testing
