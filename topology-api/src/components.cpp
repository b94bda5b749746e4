// Key functions of the API's abstract types (one vtable and typeinfo, in the
// API library), the BasicBolt adapter and TopologyContext's look-ups.
#include <memory>

#include "rstorm/bolt.hpp"
#include "rstorm/collectors.hpp"
#include "rstorm/spout.hpp"
#include "rstorm/topology_context.hpp"

namespace rstorm {

SpoutOutputCollector::~SpoutOutputCollector() = default;
OutputCollector::~OutputCollector() = default;

void SpoutOutputCollector::emit_list(std::string_view stream, std::span<const Value> values,
                                     Value msg_id, TaskId direct_task) {
  emit_to(stream, Values(values.begin(), values.end()), std::move(msg_id), direct_task);
}

void OutputCollector::emit_list(std::string_view stream, const Tuple* const* anchors,
                                std::size_t num_anchors, std::span<const Value> values,
                                TaskId direct_task) {
  emit_to(stream, anchors, num_anchors, Values(values.begin(), values.end()), direct_task);
}
void SpoutOutputCollector::emit_usual(std::span<const Value> values) {
  emit_list(kDefaultStream, values, Value(), TaskId());
}

void OutputCollector::emit_usual(const Tuple* const* anchors, std::size_t num_anchors,
                                 std::span<const Value> values) {
  emit_list(kDefaultStream, anchors, num_anchors, values, TaskId());
}

Spout::~Spout() = default;
Bolt::~Bolt() = default;
TimedBolt::~TimedBolt() = default;
BasicBolt::~BasicBolt() = default;

namespace {

// Anchors every emit to the input and acks it when execute returns. An
// exception propagates to the executor, which fails the input and counts it.
class BasicBoltAdapter final : public Bolt {
 public:
  explicit BasicBoltAdapter(std::unique_ptr<BasicBolt> basic) : basic_(std::move(basic)) {}

  void prepare(const Config& conf, const TopologyContext& context,
               OutputCollector& collector) override {
    collector_ = &collector;
    basic_->prepare(conf, context);
  }
  void execute(const Tuple& input) override {
    BasicOutputCollector out(*collector_, input);
    basic_->execute(input, out);
    collector_->ack(input);
  }
  void cleanup() override { basic_->cleanup(); }
  void pre_checkpoint(std::int64_t checkpoint) override { basic_->pre_checkpoint(checkpoint); }
  void declare_output_fields(OutputFieldsDeclarer& declarer) override {
    basic_->declare_output_fields(declarer);
  }
  BasicBolt* basic() const { return basic_.get(); }

 private:
  std::unique_ptr<BasicBolt> basic_;
  OutputCollector* collector_ = nullptr;
};

const std::vector<TaskId> kNoTasks;
const std::string kNoComponent;

}  // namespace

std::unique_ptr<Bolt> adapt_basic_bolt(std::unique_ptr<BasicBolt> basic) {
  if (!basic) return nullptr;
  return std::make_unique<BasicBoltAdapter>(std::move(basic));
}

BasicBolt* adapted_basic_bolt(Bolt& bolt) {
  auto* adapter = dynamic_cast<BasicBoltAdapter*>(&bolt);
  return adapter == nullptr ? nullptr : adapter->basic();
}

const std::vector<TaskId>& TopologyContext::component_tasks(std::string_view component) const {
  auto it = layout_->component_tasks.find(component);
  return it == layout_->component_tasks.end() ? kNoTasks : it->second;
}

const std::string& TopologyContext::component_of(TaskId task) const {
  if (task.value < 0 || static_cast<std::size_t>(task.value) >= layout_->task_component.size()) {
    return kNoComponent;
  }
  return layout_->task_component[task.value];
}

}  // namespace rstorm
