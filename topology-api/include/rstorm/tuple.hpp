// Tuple: the values a bolt receives, with where they came from (component,
// stream, task) and the stream's field names. Values are read by index or by
// field name; typed getters throw TupleError naming the field, the stream, the
// type held and the type asked for.
//
// Thread contract: a Tuple is thread-compatible. The runtime hands a bolt a
// const Tuple& on the bolt's executor thread; the bolt may copy it and ack or
// fail the copy later from the same thread (the copy instead of the input,
// not as well). A Tuple refers to stream metadata
// owned by the running topology: do not keep one past the topology's lifetime.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "rstorm/fields.hpp"
#include "rstorm/ids.hpp"
#include "rstorm/value.hpp"

namespace rstorm {

// Thrown by Tuple's getters: unknown field, index out of range, wrong type.
class TupleError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Where a tuple comes from. Owned by the runtime (one per component stream),
// immutable while the topology runs.
struct StreamInfo {
  std::string component;
  std::string stream;
  Fields fields;
  bool tick = false;  // the system tick stream
};

// One tuple tree this tuple belongs to: the tree's root id and this tuple's
// edge id in it (acking XORs edge ids; see DESIGN.md).
struct AnchorEntry {
  std::uint64_t root = 0;
  std::uint64_t edge = 0;
};

// The trees a tuple belongs to. Almost always zero or one: the first entry is
// stored inline so that the common case does not allocate, and the rest sit
// behind one pointer so that a tuple stays small.
class MessageAnchors {
 public:
  MessageAnchors() = default;
  MessageAnchors(const MessageAnchors& o)
      : first_(o.first_),
        more_(o.more_ ? std::make_unique<std::vector<AnchorEntry>>(*o.more_) : nullptr),
        count_(o.count_) {}
  MessageAnchors& operator=(const MessageAnchors& o) {
    if (this != &o) *this = MessageAnchors(o);
    return *this;
  }
  MessageAnchors(MessageAnchors&&) noexcept = default;
  MessageAnchors& operator=(MessageAnchors&&) noexcept = default;

  bool empty() const { return count_ == 0; }
  std::size_t size() const { return count_; }
  const AnchorEntry& operator[](std::size_t i) const { return i == 0 ? first_ : (*more_)[i - 1]; }
  // XORs `edge` into the entry for `root`, adding the entry when absent.
  void xor_in(std::uint64_t root, std::uint64_t edge) {
    if (count_ == 0) {
      first_ = {root, edge};
      count_ = 1;
      return;
    }
    if (first_.root == root) {
      first_.edge ^= edge;
      return;
    }
    if (!more_) more_ = std::make_unique<std::vector<AnchorEntry>>();
    for (auto& e : *more_) {
      if (e.root == root) {
        e.edge ^= edge;
        return;
      }
    }
    more_->push_back({root, edge});
    ++count_;
  }
  // Appends a pair, or XORs it into the last one when that has the same
  // root: the messages of an acking envelope, where a root may repeat (each
  // pair is one message, and the acker XORs them all). No scan: an envelope
  // gathers up to 32 such messages. `reserve`: room made for the pairs past
  // the first when the second comes.
  void append_message(std::uint64_t root, std::uint64_t edge, std::size_t reserve) {
    if (count_ == 0) {
      first_ = {root, edge};
      count_ = 1;
      return;
    }
    AnchorEntry& last = count_ == 1 ? first_ : (*more_)[count_ - 2];
    if (last.root == root) {
      last.edge ^= edge;
      return;
    }
    if (!more_) {
      more_ = std::make_unique<std::vector<AnchorEntry>>();
      more_->reserve(reserve);
    }
    more_->push_back({root, edge});
    ++count_;
  }
  void clear() {
    count_ = 0;
    more_.reset();
  }
  // clear() when that frees nothing (no entry past the first); false, with
  // nothing done, otherwise.
  bool clear_if_inline() {
    if (more_) return false;
    count_ = 0;
    return true;
  }
  // Replaces the entries with `n` entries whose roots are distinct (a tuple
  // anchored to a whole window: xor_in would scan for each).
  void assign_distinct(const AnchorEntry* entries, std::size_t n) {
    clear();
    if (n == 0) return;
    first_ = entries[0];
    if (n > 1) more_ = std::make_unique<std::vector<AnchorEntry>>(entries + 1, entries + n);
    count_ = static_cast<std::uint32_t>(n);
  }

 private:
  AnchorEntry first_{};
  std::unique_ptr<std::vector<AnchorEntry>> more_;
  std::uint32_t count_ = 0;
};

class Tuple {
 public:
  Tuple() = default;
  // REQUIRES: `source` outlives the tuple (nullptr gives an empty source).
  Tuple(const StreamInfo* source, TaskId source_task, Values values)
      : source_(source), source_task_(source_task), values_(std::move(values)) {}

  std::size_t size() const { return values_.size(); }
  const Values& values() const { return values_; }
  // Field names of the source stream (empty when the source is unknown).
  const Fields& fields() const;
  bool contains(std::string_view field) const { return fields().contains(field); }

  // Checked access: TupleError on an index out of range or an unknown field.
  const Value& get(std::size_t index) const;
  const Value& get(std::string_view field) const;
  const Value& operator[](std::size_t index) const { return get(index); }

  // Typed getters: TupleError when the value holds another type, e.g.
  // "field 'count' of stream 'default' from component 'split' holds a string, not an int64".
  std::int64_t get_int(std::size_t index) const { return checked(index, ValueType::kInt).as_int(); }
  std::int64_t get_int(std::string_view field) const;
  double get_double(std::size_t index) const {
    return checked(index, ValueType::kDouble).as_double();
  }
  double get_double(std::string_view field) const;
  bool get_bool(std::size_t index) const { return checked(index, ValueType::kBool).as_bool(); }
  bool get_bool(std::string_view field) const;
  const std::string& get_string(std::size_t index) const {
    return checked(index, ValueType::kString).as_string();
  }
  const std::string& get_string(std::string_view field) const;
  const Bytes& get_bytes(std::size_t index) const {
    return checked(index, ValueType::kBytes).as_bytes();
  }
  const Bytes& get_bytes(std::string_view field) const;

  const std::string& source_component() const;
  const std::string& source_stream() const;
  TaskId source_task() const { return source_task_; }
  // A system tick (topology.tick.tuple.freq.secs), not data.
  bool is_tick() const { return source_ != nullptr && source_->tick; }

  // For logs: "split:7 default [hello, 3]".
  std::string to_string() const;

  // --- Used by the runtime (collectors, ackers); not needed by user code. ---
  const StreamInfo* source() const { return source_; }
  const MessageAnchors& anchors() const { return anchors_; }
  MessageAnchors& mutable_anchors() { return anchors_; }
  // XOR of the edge ids of tuples emitted anchored to this one.
  std::uint64_t ack_val() const { return ack_val_; }
  void xor_ack_val(std::uint64_t edge) const { ack_val_ ^= edge; }
  // Set once the tuple was acked or failed, so that it is never done twice.
  bool completed() const { return completed_; }
  void mark_completed() const { completed_ = true; }
  Values& mutable_values() { return values_; }
  // Sets the source and the values of a fresh tuple in place (no temporary
  // tuple: moving values stored inline costs a copy per value). `values`: a
  // Values, or a std::span<const Value> (copied).
  template <typename V>
  void assign(const StreamInfo* source, TaskId source_task, V&& values) {
    assign_values(std::forward<V>(values));
    source_ = source;
    source_task_ = source_task;
  }
  // Forgets the anchors, the ack value and completion (a reused tuple).
  void reset_tracking() {
    anchors_.clear();
    ack_val_ = 0;
    completed_ = false;
  }
  // reset_tracking() and the values replaced by copies of `values`, on a
  // reused tuple, when that allocates and frees nothing: it holds as many
  // values as `values`, both hold only null, bool, int64 and double, and
  // its anchors fit inline. No call on any path, and the copy first, with
  // nothing else held in registers: a fused member's input is built
  // without a register saved. False otherwise, with the values maybe
  // partly copied: reset_tracking() and assign() then. The source is the
  // caller's to set (set_source).
  bool reassign_scalars(std::span<const Value> values) {
    const bool copied = values.size() == 2 ? refill_pair(values.data()) : refill_scalars(values);
    if (!copied || !anchors_.clear_if_inline()) return false;
    ack_val_ = 0;
    return true;
  }
  // For the runtime's inputs that are reused and never anchored (a fused
  // hop's batch slots: no anchors, ack value 0): the values replaced by
  // copies of `values` and completion forgotten, when both hold as many
  // values, all null, bool, int64 or double. False otherwise, with the
  // values maybe partly copied. refill_pair: the usual pair, with no call
  // and no loop (nothing for its caller to save).
  bool refill_pair(const Value* pair) {
    if (values_.size() != 2 || !Value::assign_two_if_scalar(values_.data(), pair)) return false;
    completed_ = false;
    return true;
  }
  // refill_pair of a tuple known to hold two scalars (a fused hop's slot,
  // Transfer::hop_slot): only `pair`'s tags are tested.
  bool refill_scalar_pair(const Value* pair) {
    if (!Value::assign_two_to_scalars(values_.data(), pair)) return false;
    completed_ = false;
    return true;
  }
  bool refill_scalars(std::span<const Value> values) {
    if (!assign_scalars(values)) return false;
    completed_ = false;
    return true;
  }
  void set_source_task(TaskId task) { source_task_ = task; }
  void set_source(const StreamInfo* source, TaskId task) {
    source_ = source;
    source_task_ = task;
  }

 private:
  // The values replaced by copies of `values` when both hold as many, all
  // scalars; false otherwise, with the values maybe partly copied.
  bool assign_scalars(std::span<const Value> values) {
    if (values_.size() != values.size()) return false;
    Value* to = values_.data();
    for (const Value& from : values) {
      if (!(to++)->assign_if_scalar(from)) return false;
    }
    return true;
  }
  const Value& checked(std::size_t index, ValueType want) const {
    if (index < values_.size() && values_[index].type() == want) return values_[index];
    throw_bad_access(index, want);
  }
  [[noreturn]] void throw_bad_access(std::size_t index, ValueType want) const;
  // Value by value into the tuple's own storage when it is empty (a fresh
  // tuple) or of the same size (a reused one): no generic range assignment.
  // Moves the values out of an rvalue, copies them otherwise.
  template <typename Vs>
  void assign_values(Vs&& values) {
    using Element = std::conditional_t<std::is_lvalue_reference_v<Vs>, const Value&, Value&&>;
    const std::size_t n = values.size();
    if (values_.size() == n) [[likely]] {
      Value* to = values_.data();
      auto* from = values.data();
      for (std::size_t i = 0; i < n; ++i) to[i] = static_cast<Element>(from[i]);
      return;
    }
    if (values_.empty() && n <= kInlineValues) {
      auto* from = values.data();
      for (std::size_t i = 0; i < n; ++i) values_.emplace_back(static_cast<Element>(from[i]));
      return;
    }
    assign_values_resized(std::forward<Vs>(values));
  }
  // Out of line, so that assign_values needs no registers saved.
  template <typename Vs>
  [[gnu::noinline]] void assign_values_resized(Vs&& values) {
    if constexpr (std::is_same_v<std::remove_cvref_t<Vs>, Values>) {
      values_ = std::forward<Vs>(values);
    } else {
      values_.assign(values.begin(), values.end());  // a span of values (copied)
    }
  }
  std::size_t field_index(std::string_view field) const;

  // The small fields first, the values (with their inline storage) last: an
  // acking message, which has no values, is then read and cleared in the
  // first two cache lines of its envelope, a tuple of two values in three.
  const StreamInfo* source_ = nullptr;
  TaskId source_task_;
  mutable bool completed_ = false;
  mutable std::uint64_t ack_val_ = 0;
  MessageAnchors anchors_;
  Values values_;
};

}  // namespace rstorm
