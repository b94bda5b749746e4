// Output collectors: how spouts and bolts emit tuples, ack and fail them, and
// report errors. The runtime implements the abstract core of each; the overloads
// are conveniences over it.
//
// Thread contract: a collector belongs to one task and may be used only on that
// task's executor thread (from open/prepare, next_tuple, execute, ack, fail),
// never from a thread of the user's own. Calls may block while a downstream
// queue is full (backpressure); a spout's emits never block, the spout is
// instead not asked for more tuples until the queues drain.
#pragma once

#include <initializer_list>
#include <string_view>
#include <vector>

#include "rstorm/ids.hpp"
#include "rstorm/tuple.hpp"
#include "rstorm/value.hpp"

namespace rstorm {

class SpoutOutputCollector {
 public:
  virtual ~SpoutOutputCollector();

  // Emits `values` on `stream`. A non-null `msg_id` makes the tuple reliable:
  // the spout's ack(msg_id) or fail(msg_id) is called once its tree completes,
  // fails or times out. A valid `direct_task` sends to that task only (the
  // stream must be declared direct).
  // `values` is taken by rvalue reference so that a tuple's values are moved
  // once, into the tuple sent (the overloads take them by value, which costs
  // no move for a temporary).
  virtual void emit_to(std::string_view stream, Values&& values, Value msg_id,
                       TaskId direct_task) = 0;
  // Counted in the component's error count and logged with its context.
  virtual void report_error(std::string_view message) = 0;
  // This spout task has no more input (a bounded source): next_tuple() is not
  // called again; ack() and fail() of its pending trees still are, so call it
  // once nothing is left to replay. `rstorm local` ends when every spout task
  // has finished and every tree is complete.
  virtual void finish() = 0;
  // What emit({...}) calls: the values of a braced list, copied once into the
  // tuple sent, with no Values built, moved from and freed on the way. The
  // default builds the Values and calls emit_to (a collector of your own
  // need not override it); the runtime's takes the list into the tuple.
  virtual void emit_list(std::string_view stream, std::initializer_list<Value> values, Value msg_id,
                         TaskId direct_task) {
    emit_to(stream, Values(values), std::move(msg_id), direct_task);
  }

  // A braced list ({word, 1}) picks these overloads; a Values the others.
  void emit(std::initializer_list<Value> values) {
    emit_list(kDefaultStream, values, Value(), TaskId());
  }
  void emit(std::initializer_list<Value> values, Value msg_id) {
    emit_list(kDefaultStream, values, std::move(msg_id), TaskId());
  }
  void emit(std::string_view stream, std::initializer_list<Value> values) {
    emit_list(stream, values, Value(), TaskId());
  }
  void emit(std::string_view stream, std::initializer_list<Value> values, Value msg_id) {
    emit_list(stream, values, std::move(msg_id), TaskId());
  }
  void emit(Values values) { emit_to(kDefaultStream, std::move(values), Value(), TaskId()); }
  void emit(Values values, Value msg_id) {
    emit_to(kDefaultStream, std::move(values), std::move(msg_id), TaskId());
  }
  void emit(std::string_view stream, Values values) {
    emit_to(stream, std::move(values), Value(), TaskId());
  }
  void emit(std::string_view stream, Values values, Value msg_id) {
    emit_to(stream, std::move(values), std::move(msg_id), TaskId());
  }
  void emit_direct(TaskId task, Values values) {
    emit_to(kDefaultStream, std::move(values), Value(), task);
  }
  void emit_direct(TaskId task, Values values, Value msg_id) {
    emit_to(kDefaultStream, std::move(values), std::move(msg_id), task);
  }
  void emit_direct(TaskId task, std::string_view stream, Values values, Value msg_id = Value()) {
    emit_to(stream, std::move(values), std::move(msg_id), task);
  }
};

class OutputCollector {
 public:
  virtual ~OutputCollector();

  // Emits `values` on `stream`, anchored to each of `anchors` (none: the tuple
  // is unreliable and outside every tuple tree). A valid `direct_task` sends to
  // that task only (the stream must be declared direct).
  // `values` by rvalue reference, as SpoutOutputCollector::emit_to.
  virtual void emit_to(std::string_view stream, const Tuple* const* anchors,
                       std::size_t num_anchors, Values&& values, TaskId direct_task) = 0;
  // Every input must be acked or failed exactly once; later calls are ignored.
  virtual void ack(const Tuple& input) = 0;
  virtual void fail(const Tuple& input) = 0;
  virtual void report_error(std::string_view message) = 0;
  // What emit({...}) calls, as SpoutOutputCollector::emit_list.
  virtual void emit_list(std::string_view stream, const Tuple* const* anchors,
                         std::size_t num_anchors, std::initializer_list<Value> values,
                         TaskId direct_task) {
    emit_to(stream, anchors, num_anchors, Values(values), direct_task);
  }

  // A braced list ({word, 1}) picks these overloads; a Values the others.
  void emit(std::initializer_list<Value> values) {
    emit_list(kDefaultStream, nullptr, 0, values, TaskId());
  }
  void emit(std::string_view stream, std::initializer_list<Value> values) {
    emit_list(stream, nullptr, 0, values, TaskId());
  }
  void emit(const Tuple& anchor, std::initializer_list<Value> values) {
    const Tuple* a = &anchor;
    emit_list(kDefaultStream, &a, 1, values, TaskId());
  }
  void emit(std::string_view stream, const Tuple& anchor, std::initializer_list<Value> values) {
    const Tuple* a = &anchor;
    emit_list(stream, &a, 1, values, TaskId());
  }
  void emit(const std::vector<const Tuple*>& anchors, std::initializer_list<Value> values) {
    emit_list(kDefaultStream, anchors.data(), anchors.size(), values, TaskId());
  }
  void emit(std::string_view stream, const std::vector<const Tuple*>& anchors,
            std::initializer_list<Value> values) {
    emit_list(stream, anchors.data(), anchors.size(), values, TaskId());
  }
  void emit(Values values) { emit_to(kDefaultStream, nullptr, 0, std::move(values), TaskId()); }
  void emit(std::string_view stream, Values values) {
    emit_to(stream, nullptr, 0, std::move(values), TaskId());
  }
  void emit(const Tuple& anchor, Values values) {
    const Tuple* a = &anchor;
    emit_to(kDefaultStream, &a, 1, std::move(values), TaskId());
  }
  void emit(std::string_view stream, const Tuple& anchor, Values values) {
    const Tuple* a = &anchor;
    emit_to(stream, &a, 1, std::move(values), TaskId());
  }
  void emit(const std::vector<const Tuple*>& anchors, Values values) {
    emit_to(kDefaultStream, anchors.data(), anchors.size(), std::move(values), TaskId());
  }
  void emit(std::string_view stream, const std::vector<const Tuple*>& anchors, Values values) {
    emit_to(stream, anchors.data(), anchors.size(), std::move(values), TaskId());
  }
  void emit_direct(TaskId task, Values values) {
    emit_to(kDefaultStream, nullptr, 0, std::move(values), task);
  }
  void emit_direct(TaskId task, std::string_view stream, Values values) {
    emit_to(stream, nullptr, 0, std::move(values), task);
  }
  void emit_direct(TaskId task, const Tuple& anchor, Values values) {
    const Tuple* a = &anchor;
    emit_to(kDefaultStream, &a, 1, std::move(values), task);
  }
  void emit_direct(TaskId task, std::string_view stream, const Tuple& anchor, Values values) {
    const Tuple* a = &anchor;
    emit_to(stream, &a, 1, std::move(values), task);
  }
};

// What a BasicBolt emits with: every emit is anchored to the input being
// executed, and the input is acked when execute returns (failed if it throws).
// Same thread contract as OutputCollector.
class BasicOutputCollector {
 public:
  // REQUIRES: `out` and `input` outlive this collector.
  BasicOutputCollector(OutputCollector& out, const Tuple& input) : out_(out), input_(&input) {}

  void emit(std::initializer_list<Value> values) {
    out_.emit_list(kDefaultStream, &input_, 1, values, TaskId());
  }
  void emit(std::string_view stream, std::initializer_list<Value> values) {
    out_.emit_list(stream, &input_, 1, values, TaskId());
  }
  void emit(Values values) { out_.emit_to(kDefaultStream, &input_, 1, std::move(values), TaskId()); }
  void emit(std::string_view stream, Values values) {
    out_.emit_to(stream, &input_, 1, std::move(values), TaskId());
  }
  void emit_direct(TaskId task, Values values) {
    out_.emit_to(kDefaultStream, &input_, 1, std::move(values), task);
  }
  void emit_direct(TaskId task, std::string_view stream, Values values) {
    out_.emit_to(stream, &input_, 1, std::move(values), task);
  }
  void report_error(std::string_view message) { out_.report_error(message); }

 private:
  OutputCollector& out_;
  const Tuple* input_;
};

}  // namespace rstorm
