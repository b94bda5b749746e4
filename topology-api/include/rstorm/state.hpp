// Keyed state: typed key-value maps that a task keeps across tuples, in its
// task's state store. A bolt (or spout) asks its TopologyContext for one by
// name, usually in prepare():
//
//   class CountBolt : public rstorm::BasicBolt {
//    public:
//     void prepare(const Config&, const TopologyContext& context) override {
//       counts_ = context.key_value_state<std::string, std::int64_t>("counts");
//     }
//     void execute(const Tuple& input, BasicOutputCollector& out) override {
//       const std::string& word = input.get_string("word");
//       const std::int64_t n = counts_.get(word, 0) + 1;
//       counts_.put(word, n);
//       out.emit({word, n});
//     }
//     ...
//    private:
//     KeyValueState<std::string, std::int64_t> counts_;
//   };
//
// Where the store is (topology.state.provider): in memory in local mode and
// tests, in a RocksDB database of the task's own under the worker's local
// folder on a cluster (`<worker dir>/state/task-<id>`), which survives a
// restart of the worker on that folder. Keys and values are encoded by
// StateCodec (rstorm/state_codec.hpp), which users may specialise.
//
// One store per task holds every named state of that task, each under the
// prefix `<name>\0`, so that states of different names never share a key and
// a task's whole state can be copied (a later checkpoint) as one unit.
//
// Failures (a store that cannot be opened or written, a value that does not
// decode) throw StateError naming the task, the state and the key. Thrown
// from execute, it fails that input and is counted and logged as an error of
// the component; thrown from prepare, the task cannot run.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "rstorm/ids.hpp"
#include "rstorm/state_codec.hpp"
#include "rstorm/value.hpp"

namespace rstorm {

// What keyed state throws, e.g. "state 'counts' of task 7 (component 'count'):
// value of key 'apple' cannot be decoded as int64: 3 bytes, expected 8".
class StateError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  ~StateError() override;
};

// "task 7 (component 'count')": how state errors name a task.
std::string describe_task(TaskId task, std::string_view component);

// One write of StateStore::apply: a put, or a removal when `value` is empty.
struct StateWrite {
  std::string key;
  std::optional<std::string> value;
};

// StateStore: one task's state as bytes: keys ordered as unsigned bytes
// (memcmp), each with a value. KeyValueState is the typed view users work
// with; a store is what a runtime provides (StateBackend).
//
// Thread contract: implementations are thread-safe. Failures throw StateError
// naming the store (a RocksDB store: its directory).
class StateStore {
 public:
  virtual ~StateStore();

  // The value of `key`; empty when there is none.
  virtual std::optional<std::string> get(std::string_view key) = 0;
  virtual void put(std::string_view key, std::string_view value) = 0;
  // Removing an absent key is not an error.
  virtual void remove(std::string_view key) = 0;
  // Every (key, value) whose key starts with `prefix`, in key order. A copy:
  // the caller may write to the store while going through it.
  virtual std::vector<std::pair<std::string, std::string>> scan_prefix(std::string_view prefix) = 0;
  // Applies every write, in order, or none of them.
  virtual void apply(const std::vector<StateWrite>& writes) = 0;
  // Every (key, value) as they are now, read later: the function is called
  // at most once, from any thread, while the store is open, and throws
  // StateError when it cannot read. Checkpoints take a task's state this way
  // so that the task does not wait for the copy (RocksDB: a snapshot, read
  // by the checkpoint uploader). Default: scan_prefix("") now.
  using Frozen = std::function<std::vector<std::pair<std::string, std::string>>()>;
  virtual Frozen freeze();
};

// A StateStore in a std::map: local mode and tests. Lost with the object.
// Thread-safe.
class InMemoryStateStore final : public StateStore {
 public:
  std::optional<std::string> get(std::string_view key) override;
  void put(std::string_view key, std::string_view value) override;
  void remove(std::string_view key) override;
  std::vector<std::pair<std::string, std::string>> scan_prefix(std::string_view prefix) override;
  void apply(const std::vector<StateWrite>& writes) override;

  // Keys held, every state's together.
  std::size_t size() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::string, std::less<>> data_;  // guarded by mutex_
};

// StateBackend: where the tasks of a running topology find their stores
// (TopologyContext::state_store). The runtime makes one per topology and
// process from topology.state.provider. Thread-safe.
class StateBackend {
 public:
  virtual ~StateBackend();

  // The store of `task` (of `component`): opened on the first call, the same
  // store on every later one. Throws StateError naming the task and where its
  // store is when it cannot be opened.
  virtual std::shared_ptr<StateStore> open(TaskId task, std::string_view component) = 0;
  // Whether `task` has a store that open() would find with something in it
  // (opened already, or on disk): checkpoints snapshot and restore only
  // those, so that tasks that keep no state cost nothing. Default: true.
  virtual bool holds(TaskId task);
  // Throws `task`'s store away: its next open() starts empty. A restore
  // replaces a task's state this way, without reading what is there (a
  // RocksDB store left by a killed process would first replay its log).
  // Throws StateError naming the task. REQUIRES: nothing uses the store.
  // Default: removes every key.
  virtual void discard(TaskId task, std::string_view component);
};

// One InMemoryStateStore per task. Thread-safe.
class InMemoryStateBackend final : public StateBackend {
 public:
  std::shared_ptr<StateStore> open(TaskId task, std::string_view component) override;
  bool holds(TaskId task) override;
  void discard(TaskId task, std::string_view component) override;

 private:
  std::mutex mutex_;
  std::map<TaskId, std::shared_ptr<InMemoryStateStore>> stores_;  // guarded by mutex_
};

namespace detail {

// 'apple' (quoted, long keys cut), for messages.
std::string quote_key(std::string_view key);
// Bytes of unknown meaning, for messages: quoted when printable, else 0x<hex>.
std::string render_bytes(std::string_view bytes);

// A typed key as messages show it: strings quoted, numbers as numbers, other
// types by the bytes of their encoding.
template <typename K>
std::string render_key(const K& key) {
  if constexpr (std::is_convertible_v<const K&, std::string_view>) {
    return quote_key(key);
  } else if constexpr (std::is_same_v<K, bool>) {
    return key ? "true" : "false";
  } else if constexpr (std::is_integral_v<K>) {
    return std::to_string(key);
  } else if constexpr (std::is_same_v<K, double>) {
    return Value(key).to_string();
  } else if constexpr (std::is_same_v<K, Value>) {
    return key.type() == ValueType::kString ? quote_key(key.as_string()) : key.to_string();
  } else {
    return render_bytes(StateCodec<K>::encode(key));
  }
}

// The untyped part of KeyValueState: the store, the name and its key prefix,
// and the messages of its errors.
class KeyValueStateBase {
 public:
  // The state's name.
  const std::string& name() const { return name_; }
  // Whether this state is bound to a store (a default-constructed one is not).
  bool bound() const { return store_ != nullptr; }

 protected:
  KeyValueStateBase() = default;
  // Throws StateError when `name` is empty, holds '\0' or starts with "__"
  // (reserved for the runtime).
  KeyValueStateBase(std::shared_ptr<StateStore> store, std::string name, TaskId task,
                    std::string_view component);

  // The store; StateError when this state is not bound.
  StateStore& store() const;
  // `<name>\0<encoded key>`: the key in the store.
  std::string store_key(std::string_view encoded) const { return prefix_ + std::string(encoded); }
  const std::string& prefix() const { return prefix_; }
  // Throws StateError("state '<name>' of <task>: <what>").
  [[noreturn]] void fail(std::string_view what) const;
  // Throws StateError for `e`, caught from a codec decoding `what` ("value of
  // key 'apple'"): "<what> cannot be decoded as <type>: <why>".
  [[noreturn]] void fail_decode(std::string_view what, const std::exception& e) const;

 private:
  std::shared_ptr<StateStore> store_;
  std::string name_;
  std::string prefix_;
  std::string owner_;  // "task 7 (component 'count')"; empty when unknown
};

}  // namespace detail

// KeyValueState<K, V>: the keyed state `name` of one task, a typed view of its
// StateStore; K and V need a StateCodec. Get one from
// TopologyContext::key_value_state; it is valid until the task's cleanup()
// (close() for a spout) returns. A handle: copies share the store. Used on
// the task's thread (thread-compatible; the stores themselves are thread-safe).
template <typename K, typename V>
class KeyValueState : public detail::KeyValueStateBase {
 public:
  // Unbound: every call but name() and bound() throws StateError. For members
  // assigned in prepare().
  KeyValueState() = default;
  // The state `name` in `store`; `task` and `component` name its owner in
  // error messages. TopologyContext::key_value_state calls this.
  KeyValueState(std::shared_ptr<StateStore> store, std::string name, TaskId task = TaskId(),
                std::string_view component = {})
      : KeyValueStateBase(std::move(store), std::move(name), task, component) {}

  std::optional<V> get(const K& key) const {
    std::optional<std::string> raw;
    try {
      raw = store().get(store_key(StateCodec<K>::encode(key)));
    } catch (const std::exception& e) {
      fail("get of key " + detail::render_key(key) + " failed: " + e.what());
    }
    if (!raw) return std::nullopt;
    return decode_value(key, *raw);
  }
  // The value of `key`, or `fallback` when there is none.
  V get(const K& key, V fallback) const {
    std::optional<V> v = get(key);
    return v ? std::move(*v) : std::move(fallback);
  }
  bool contains(const K& key) const {
    try {
      return store().get(store_key(StateCodec<K>::encode(key))).has_value();
    } catch (const std::exception& e) {
      fail("get of key " + detail::render_key(key) + " failed: " + e.what());
    }
  }
  void put(const K& key, const V& value) {
    try {
      store().put(store_key(StateCodec<K>::encode(key)), StateCodec<V>::encode(value));
    } catch (const std::exception& e) {
      fail("put of key " + detail::render_key(key) + " failed: " + e.what());
    }
  }
  // Removing an absent key is not an error.
  void remove(const K& key) {
    try {
      store().remove(store_key(StateCodec<K>::encode(key)));
    } catch (const std::exception& e) {
      fail("remove of key " + detail::render_key(key) + " failed: " + e.what());
    }
  }
  // Removes every key of this state (other states of the task stay), at once.
  void clear() {
    std::vector<StateWrite> writes;
    for (const auto& entry : scan_raw("", "clear")) writes.push_back({store_key(entry.first), {}});
    try {
      store().apply(writes);
    } catch (const std::exception& e) {
      fail(std::string("clear failed: ") + e.what());
    }
  }

  // Calls visit(key, value) for every entry whose key's encoding starts with
  // `prefix`'s, in key order: for std::string and Bytes keys, the keys that
  // start with `prefix`; for fixed-size keys (numbers, bool) only `prefix`
  // itself. `visit` returns void, or bool: false stops the scan. The entries
  // are read before the first call, so `visit` may write to the state.
  template <typename F>
  void for_each_prefix(const K& prefix, F&& visit) const {
    visit_entries(
        scan_raw(StateCodec<K>::encode(prefix), "scan of prefix " + detail::render_key(prefix)),
        visit);
  }
  // Every entry, in key order (numeric for integer keys), as for_each_prefix.
  template <typename F>
  void for_each(F&& visit) const {
    visit_entries(scan_raw("", "scan"), visit);
  }
  // The entries for_each_prefix would visit.
  std::vector<std::pair<K, V>> scan_prefix(const K& prefix) const {
    std::vector<std::pair<K, V>> out;
    for_each_prefix(prefix, [&](const K& k, const V& v) { out.emplace_back(k, v); });
    return out;
  }

  // The writes put(key, value) and remove(key) would make, for
  // StateStore::apply (TopologyContext::state_store): writes to several keys,
  // of this state or others of the task, applied all or none.
  StateWrite put_write(const K& key, const V& value) const {
    return {store_key(StateCodec<K>::encode(key)), StateCodec<V>::encode(value)};
  }
  StateWrite remove_write(const K& key) const {
    return {store_key(StateCodec<K>::encode(key)), std::nullopt};
  }

 private:
  K decode_key(std::string_view raw) const {
    try {
      return StateCodec<K>::decode(raw);
    } catch (const std::exception& e) {
      fail_decode("key " + detail::render_bytes(raw), e);
    }
  }
  V decode_value(const K& key, std::string_view raw) const {
    try {
      return StateCodec<V>::decode(raw);
    } catch (const std::exception& e) {
      fail_decode("value of key " + detail::render_key(key), e);
    }
  }
  // This state's entries under `encoded_prefix`, keys without the state's
  // prefix; `what` names the operation in an error.
  std::vector<std::pair<std::string, std::string>> scan_raw(const std::string& encoded_prefix,
                                                            const std::string& what) const {
    std::vector<std::pair<std::string, std::string>> entries;
    try {
      entries = store().scan_prefix(store_key(encoded_prefix));
    } catch (const std::exception& e) {
      fail(what + " failed: " + e.what());
    }
    for (auto& [key, value] : entries) key.erase(0, prefix().size());
    return entries;
  }
  template <typename F>
  void visit_entries(const std::vector<std::pair<std::string, std::string>>& entries,
                     F& visit) const {
    for (const auto& [raw_key, raw_value] : entries) {
      const K key = decode_key(raw_key);
      const V value = decode_value(key, raw_value);
      if constexpr (std::is_same_v<std::invoke_result_t<F&, const K&, const V&>, bool>) {
        if (!visit(key, value)) return;
      } else {
        visit(key, value);
      }
    }
  }
};

}  // namespace rstorm
