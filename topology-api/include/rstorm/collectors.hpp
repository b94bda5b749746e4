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

#include <concepts>
#include <initializer_list>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "rstorm/ids.hpp"
#include "rstorm/tuple.hpp"
#include "rstorm/value.hpp"

namespace rstorm {

// The Values the emit overloads take: a temporary or std::move'd one is moved
// into the tuple sent (emit_to); any other is copied once, straight into it
// (emit_list), with no Values copied in between. (V defaults to Values, so
// that a braced list still makes a Values where no initializer_list
// overload takes it, as emit_direct(task, {n}).)
template <typename V>
concept EmittedValues = std::same_as<std::remove_cvref_t<V>, Values>;

namespace detail {
template <typename V>
inline constexpr bool kMovable =
    std::is_rvalue_reference_v<V&&> && !std::is_const_v<std::remove_reference_t<V>>;
inline std::span<const Value> span_of(std::initializer_list<Value> list) {
  return {list.begin(), list.size()};
}
}  // namespace detail

class SpoutOutputCollector {
 public:
  virtual ~SpoutOutputCollector();

  // Emits `values` on `stream`. A non-null `msg_id` makes the tuple reliable:
  // the spout's ack(msg_id) or fail(msg_id) is called once its tree completes,
  // fails or times out. A valid `direct_task` sends to that task only (the
  // stream must be declared direct).
  // `values` is taken by rvalue reference so that a tuple's values are moved
  // once, into the tuple sent (emit_values).
  virtual void emit_to(std::string_view stream, Values&& values, Value msg_id,
                       TaskId direct_task) = 0;
  // Counted in the component's error count and logged with its context.
  virtual void report_error(std::string_view message) = 0;
  // This spout task has no more input (a bounded source): next_tuple() is not
  // called again; ack() and fail() of its pending trees still are, so call it
  // once nothing is left to replay. `rstorm local` ends when every spout task
  // has finished and every tree is complete.
  virtual void finish() = 0;
  // What emit({...}) and emit of a Values that is not a temporary call: the
  // values copied once into the tuple sent, with no Values built, moved from
  // and freed on the way. The default builds the Values and calls emit_to (a
  // collector of your own need not override it); the runtime's copies them
  // into the tuple. Defined out of line: inline, the compiler guessed it at
  // every emit in a spout, inlined it, and made room for its Values.
  virtual void emit_list(std::string_view stream, std::span<const Value> values, Value msg_id,
                         TaskId direct_task);
  // emit_list of the usual emit: the default stream, no message id (an
  // unreliable tuple), no direct task. What emit({...}) and emit of a Values
  // to copy call when they name none of the three, so that the most common
  // emit passes three words, not eight. The default calls emit_list.
  virtual void emit_usual(std::span<const Value> values);
  // emit_to for a Values to move from, emit_list for one to copy.
  template <EmittedValues V = Values>
  void emit_values(std::string_view stream, V&& values, Value msg_id, TaskId direct_task) {
    if constexpr (detail::kMovable<V>) {
      emit_to(stream, std::move(values), std::move(msg_id), direct_task);
    } else {
      emit_list(stream, std::span<const Value>(values.data(), values.size()), std::move(msg_id),
                direct_task);
    }
  }

  // A braced list ({word, 1}) picks these overloads; a Values the others
  // (EmittedValues).
  void emit(std::initializer_list<Value> values) { emit_usual(detail::span_of(values)); }
  void emit(std::initializer_list<Value> values, Value msg_id) {
    emit_list(kDefaultStream, detail::span_of(values), std::move(msg_id), TaskId());
  }
  void emit(std::string_view stream, std::initializer_list<Value> values) {
    emit_list(stream, detail::span_of(values), Value(), TaskId());
  }
  void emit(std::string_view stream, std::initializer_list<Value> values, Value msg_id) {
    emit_list(stream, detail::span_of(values), std::move(msg_id), TaskId());
  }
  template <EmittedValues V = Values>
  void emit(V&& values) {
    if constexpr (detail::kMovable<V>) {
      emit_to(kDefaultStream, std::move(values), Value(), TaskId());
    } else {
      emit_usual(std::span<const Value>(values.data(), values.size()));
    }
  }
  template <EmittedValues V = Values>
  void emit(V&& values, Value msg_id) {
    emit_values(kDefaultStream, std::forward<V>(values), std::move(msg_id), TaskId());
  }
  template <EmittedValues V = Values>
  void emit(std::string_view stream, V&& values) {
    emit_values(stream, std::forward<V>(values), Value(), TaskId());
  }
  template <EmittedValues V = Values>
  void emit(std::string_view stream, V&& values, Value msg_id) {
    emit_values(stream, std::forward<V>(values), std::move(msg_id), TaskId());
  }
  template <EmittedValues V = Values>
  void emit_direct(TaskId task, V&& values) {
    emit_values(kDefaultStream, std::forward<V>(values), Value(), task);
  }
  template <EmittedValues V = Values>
  void emit_direct(TaskId task, V&& values, Value msg_id) {
    emit_values(kDefaultStream, std::forward<V>(values), std::move(msg_id), task);
  }
  template <EmittedValues V = Values>
  void emit_direct(TaskId task, std::string_view stream, V&& values, Value msg_id = Value()) {
    emit_values(stream, std::forward<V>(values), std::move(msg_id), task);
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
  // Every input must be acked or failed exactly once; later calls on the
  // same Tuple object are ignored. A copy is another object: ack either the
  // input or one copy of it, never both (as in Storm, a second ack of one
  // tuple undoes the first, and its tree then waits for its timeout).
  virtual void ack(const Tuple& input) = 0;
  virtual void fail(const Tuple& input) = 0;
  virtual void report_error(std::string_view message) = 0;
  // What emit({...}) and emit of a Values that is not a temporary call, as
  // SpoutOutputCollector::emit_list (out of line for the same reason).
  virtual void emit_list(std::string_view stream, const Tuple* const* anchors,
                         std::size_t num_anchors, std::span<const Value> values,
                         TaskId direct_task);
  // emit_list on the default stream to no direct task, as
  // SpoutOutputCollector::emit_usual: what the emits that name neither
  // call. The default calls emit_list.
  virtual void emit_usual(const Tuple* const* anchors, std::size_t num_anchors,
                          std::span<const Value> values);
  // emit_to for a Values to move from, emit_list for one to copy.
  template <EmittedValues V = Values>
  void emit_values(std::string_view stream, const Tuple* const* anchors, std::size_t num_anchors,
                   V&& values, TaskId direct_task) {
    if constexpr (detail::kMovable<V>) {
      emit_to(stream, anchors, num_anchors, std::move(values), direct_task);
    } else {
      emit_list(stream, anchors, num_anchors, std::span<const Value>(values.data(), values.size()),
                direct_task);
    }
  }
  // emit_values on the default stream to no direct task.
  template <EmittedValues V = Values>
  void emit_usual_values(const Tuple* const* anchors, std::size_t num_anchors, V&& values) {
    if constexpr (detail::kMovable<V>) {
      emit_to(kDefaultStream, anchors, num_anchors, std::move(values), TaskId());
    } else {
      emit_usual(anchors, num_anchors, std::span<const Value>(values.data(), values.size()));
    }
  }

  // A braced list ({word, 1}) picks these overloads; a Values the others
  // (EmittedValues).
  void emit(std::initializer_list<Value> values) {
    emit_usual(nullptr, 0, detail::span_of(values));
  }
  void emit(std::string_view stream, std::initializer_list<Value> values) {
    emit_list(stream, nullptr, 0, detail::span_of(values), TaskId());
  }
  void emit(const Tuple& anchor, std::initializer_list<Value> values) {
    const Tuple* a = &anchor;
    emit_usual(&a, 1, detail::span_of(values));
  }
  void emit(std::string_view stream, const Tuple& anchor, std::initializer_list<Value> values) {
    const Tuple* a = &anchor;
    emit_list(stream, &a, 1, detail::span_of(values), TaskId());
  }
  void emit(const std::vector<const Tuple*>& anchors, std::initializer_list<Value> values) {
    emit_usual(anchors.data(), anchors.size(), detail::span_of(values));
  }
  void emit(std::string_view stream, const std::vector<const Tuple*>& anchors,
            std::initializer_list<Value> values) {
    emit_list(stream, anchors.data(), anchors.size(), detail::span_of(values), TaskId());
  }
  template <EmittedValues V = Values>
  void emit(V&& values) {
    emit_usual_values(nullptr, 0, std::forward<V>(values));
  }
  template <EmittedValues V = Values>
  void emit(std::string_view stream, V&& values) {
    emit_values(stream, nullptr, 0, std::forward<V>(values), TaskId());
  }
  template <EmittedValues V = Values>
  void emit(const Tuple& anchor, V&& values) {
    const Tuple* a = &anchor;
    emit_usual_values(&a, 1, std::forward<V>(values));
  }
  template <EmittedValues V = Values>
  void emit(std::string_view stream, const Tuple& anchor, V&& values) {
    const Tuple* a = &anchor;
    emit_values(stream, &a, 1, std::forward<V>(values), TaskId());
  }
  template <EmittedValues V = Values>
  void emit(const std::vector<const Tuple*>& anchors, V&& values) {
    emit_usual_values(anchors.data(), anchors.size(), std::forward<V>(values));
  }
  template <EmittedValues V = Values>
  void emit(std::string_view stream, const std::vector<const Tuple*>& anchors, V&& values) {
    emit_values(stream, anchors.data(), anchors.size(), std::forward<V>(values), TaskId());
  }
  template <EmittedValues V = Values>
  void emit_direct(TaskId task, V&& values) {
    emit_values(kDefaultStream, nullptr, 0, std::forward<V>(values), task);
  }
  template <EmittedValues V = Values>
  void emit_direct(TaskId task, std::string_view stream, V&& values) {
    emit_values(stream, nullptr, 0, std::forward<V>(values), task);
  }
  template <EmittedValues V = Values>
  void emit_direct(TaskId task, const Tuple& anchor, V&& values) {
    const Tuple* a = &anchor;
    emit_values(kDefaultStream, &a, 1, std::forward<V>(values), task);
  }
  template <EmittedValues V = Values>
  void emit_direct(TaskId task, std::string_view stream, const Tuple& anchor, V&& values) {
    const Tuple* a = &anchor;
    emit_values(stream, &a, 1, std::forward<V>(values), task);
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
    out_.emit_usual(&input_, 1, detail::span_of(values));
  }
  void emit(std::string_view stream, std::initializer_list<Value> values) {
    out_.emit_list(stream, &input_, 1, detail::span_of(values), TaskId());
  }
  template <EmittedValues V = Values>
  void emit(V&& values) {
    out_.emit_usual_values(&input_, 1, std::forward<V>(values));
  }
  template <EmittedValues V = Values>
  void emit(std::string_view stream, V&& values) {
    out_.emit_values(stream, &input_, 1, std::forward<V>(values), TaskId());
  }
  template <EmittedValues V = Values>
  void emit_direct(TaskId task, V&& values) {
    out_.emit_values(kDefaultStream, &input_, 1, std::forward<V>(values), task);
  }
  template <EmittedValues V = Values>
  void emit_direct(TaskId task, std::string_view stream, V&& values) {
    out_.emit_values(stream, &input_, 1, std::forward<V>(values), task);
  }
  void report_error(std::string_view message) { out_.report_error(message); }

  // For the runtime: the collector of a run of inputs, moved on to the next
  // one (one store, not a collector built per input).
  void set_input(const Tuple& input) { input_ = &input; }

 private:
  OutputCollector& out_;
  const Tuple* input_;
};

}  // namespace rstorm
