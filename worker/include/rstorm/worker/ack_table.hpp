// AckTable<V>: an open-addressing hash map from a non-zero 64-bit tree id to V
// (keys hashed with XXH3, see mix()), with linear probing and backward-shift
// deletion: no allocation per entry, which matters at a million trees per
// second. Single thread.
#pragma once

#include <cstdint>
#include <vector>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace rstorm::worker {

template <typename V>
class AckTable {
 public:
  explicit AckTable(std::size_t initial = 1024) { slots_.resize(round_up(initial)); }

  std::size_t size() const { return size_; }

  V* find(std::uint64_t key) {
    std::size_t mask = slots_.size() - 1;
    for (std::size_t i = mix(key) & mask;; i = (i + 1) & mask) {
      if (slots_[i].key == key) return &slots_[i].value;
      if (slots_[i].key == 0) return nullptr;
    }
  }

  // The entry for `key`, value-initialized when new. REQUIRES: key != 0.
  V& get_or_insert(std::uint64_t key, bool* inserted = nullptr) {
    if ((size_ + 1) * 2 > slots_.size()) grow();
    std::size_t mask = slots_.size() - 1;
    std::size_t i = mix(key) & mask;
    for (; slots_[i].key != 0; i = (i + 1) & mask) {
      if (slots_[i].key == key) {
        if (inserted) *inserted = false;
        return slots_[i].value;
      }
    }
    slots_[i].key = key;
    slots_[i].value = V();
    ++size_;
    if (inserted) *inserted = true;
    return slots_[i].value;
  }

  bool erase(std::uint64_t key) {
    std::size_t mask = slots_.size() - 1;
    std::size_t i = mix(key) & mask;
    for (; slots_[i].key != key; i = (i + 1) & mask) {
      if (slots_[i].key == 0) return false;
    }
    erase_slot(i);
    return true;
  }

  // Erases the entry whose value `v` is (from find or get_or_insert) without
  // probing again. REQUIRES: v points into this table.
  void erase_value(V* v) {
    const auto offset = reinterpret_cast<const char*>(v) -
                        reinterpret_cast<const char*>(&slots_[0].value);
    erase_slot(static_cast<std::size_t>(offset) / sizeof(Slot));
  }

 private:
  void erase_slot(std::size_t i) {
    std::size_t mask = slots_.size() - 1;
    // Backward shift: move later entries of the probe run into the hole.
    for (std::size_t j = (i + 1) & mask; slots_[j].key != 0; j = (j + 1) & mask) {
      std::size_t home = mix(slots_[j].key) & mask;
      bool between = i <= j ? (i < home && home <= j) : (i < home || home <= j);
      if (!between) {
        slots_[i] = std::move(slots_[j]);
        i = j;
      }
    }
    slots_[i].key = 0;
    slots_[i].value = V();
    --size_;
  }

 public:
  // Calls f(key, value&) for every entry; f must not insert or erase.
  template <typename F>
  void for_each(F&& f) {
    for (auto& s : slots_) {
      if (s.key != 0) f(s.key, s.value);
    }
  }

 private:
  struct Slot {
    std::uint64_t key = 0;
    V value{};
  };

  static std::size_t round_up(std::size_t n) {
    std::size_t c = 16;
    while (c < n) c <<= 1;
    return c;
  }
  // Keys are tree roots: a producer prefix in the high bits and a counter in
  // the low ones, so the trees in flight are a block of consecutive keys. They
  // are hashed (XXH3) rather than placed in consecutive slots: with linear
  // probing, a block of consecutive slots is one probe run, and the
  // backward-shift deletion of its oldest entry (the usual one: trees complete
  // about in order) would walk the whole run, O(trees in flight) per
  // completion. Hashed, runs stay a few slots long at half load.
  static std::size_t mix(std::uint64_t k) {
    return static_cast<std::size_t>(XXH3_64bits(&k, sizeof k));
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.clear();
    slots_.resize(old.size() * 2);
    size_ = 0;
    for (auto& s : old) {
      if (s.key != 0) get_or_insert(s.key) = std::move(s.value);
    }
  }

  std::vector<Slot> slots_;
  std::size_t size_ = 0;
};

}  // namespace rstorm::worker
