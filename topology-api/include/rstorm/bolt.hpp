// Bolt and BasicBolt: processing steps.
//
// Thread contract (as in Storm): every method of one bolt instance is called on
// one executor thread, never concurrently: prepare, execute for each input,
// cleanup. execute should not block for long: the executor's other tasks wait.
// Each input must be acked or failed exactly once (a BasicBolt does it for
// you). An exception escaping execute fails the input, is counted as an error
// of the component and logged; the bolt keeps running.
#pragma once

#include <chrono>

#include "rstorm/collectors.hpp"
#include "rstorm/config.hpp"
#include "rstorm/output_fields_declarer.hpp"
#include "rstorm/topology_context.hpp"
#include "rstorm/tuple.hpp"

namespace rstorm {

class Bolt {
 public:
  virtual ~Bolt();

  // `collector` stays valid until cleanup() returns.
  virtual void prepare(const Config& conf, const TopologyContext& context,
                       OutputCollector& collector) = 0;
  virtual void execute(const Tuple& input) = 0;
  virtual void cleanup() {}
  // Called once on a separate instance when the topology is built.
  virtual void declare_output_fields(OutputFieldsDeclarer& declarer) = 0;
  // Checkpoints (topology.state.checkpointing): called between two executes
  // once checkpoint `checkpoint`'s barrier came on every input, right before
  // the task's keyed state is snapshotted. A bolt that keeps something in
  // memory that a restore must bring back (a window's buffer) writes it to
  // its keyed state here. An exception fails the task's part of the
  // checkpoint (reported; the topology goes on).
  virtual void pre_checkpoint([[maybe_unused]] std::int64_t checkpoint) {}
};

// A bolt that is also called at a fixed period, on its executor thread and
// between executes: windowed bolts use it to activate time windows and to
// advance watermarks. Not fused into its producer (topology.fuse.executors).
class TimedBolt : public Bolt {
 public:
  ~TimedBolt() override;

  // Asked once, after prepare(); zero or less: no timer.
  virtual std::chrono::milliseconds timer_period() const = 0;
  // An exception escaping it is counted as an error of the component and
  // logged; the bolt keeps running.
  virtual void on_timer() = 0;
};

// A bolt whose emits are anchored to the input and whose input is acked after
// execute returns: the usual filter/function shape.
class BasicBolt {
 public:
  virtual ~BasicBolt();

  virtual void prepare([[maybe_unused]] const Config& conf,
                       [[maybe_unused]] const TopologyContext& context) {}
  virtual void execute(const Tuple& input, BasicOutputCollector& collector) = 0;
  virtual void cleanup() {}
  virtual void declare_output_fields(OutputFieldsDeclarer& declarer) = 0;
  // As Bolt::pre_checkpoint.
  virtual void pre_checkpoint([[maybe_unused]] std::int64_t checkpoint) {}
};

// Runs a BasicBolt as a Bolt (what TopologyBuilder does with one).
std::unique_ptr<Bolt> adapt_basic_bolt(std::unique_ptr<BasicBolt> basic);
// The BasicBolt that `bolt` runs when it came from adapt_basic_bolt, else
// nullptr. For the runtime, which then calls it without the adapter: one
// virtual call per input instead of three.
BasicBolt* adapted_basic_bolt(Bolt& bolt);

}  // namespace rstorm
