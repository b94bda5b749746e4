// Spout: a source of tuples.
//
// Thread contract (as in Storm): every method of one spout instance is called
// on one executor thread, never concurrently: open, then activate, next_tuple,
// ack, fail, deactivate in any order, then close. next_tuple, ack and fail must
// not block: next_tuple emits zero or more tuples and returns; when it has
// nothing to emit it returns at once and the executor backs off. A spout whose
// downstream queues are full, or that has topology.max.spout.pending tuples in
// flight, is not asked for more until that clears.
#pragma once

#include "rstorm/collectors.hpp"
#include "rstorm/config.hpp"
#include "rstorm/output_fields_declarer.hpp"
#include "rstorm/topology_context.hpp"
#include "rstorm/value.hpp"

namespace rstorm {

class Spout {
 public:
  virtual ~Spout();

  // `conf` is the topology config with the component's own entries on top.
  // `collector` stays valid until close() returns.
  virtual void open(const Config& conf, const TopologyContext& context,
                    SpoutOutputCollector& collector) = 0;
  virtual void next_tuple() = 0;
  // The tuple tree of `msg_id` completed.
  virtual void ack([[maybe_unused]] const Value& msg_id) {}
  // The tuple tree of `msg_id` failed or timed out: the spout may replay it.
  virtual void fail([[maybe_unused]] const Value& msg_id) {}
  virtual void activate() {}
  virtual void deactivate() {}
  virtual void close() {}
  // Called once on a separate instance when the topology is built.
  virtual void declare_output_fields(OutputFieldsDeclarer& declarer) = 0;
};

}  // namespace rstorm
