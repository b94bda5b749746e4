// AckTable<V>: an open-addressing hash map from a non-zero 64-bit tree id to V
// (keys placed by Fibonacci hashing, see home()), with linear probing and backward-shift
// deletion: no allocation per entry, which matters at a million trees per
// second. Single thread.
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

namespace rstorm::worker {

template <typename V>
class AckTable {
 public:
  explicit AckTable(std::size_t initial = 1024) { resize(round_up(initial)); }

  std::size_t size() const { return size_; }

  V* find(std::uint64_t key) {
    std::size_t mask = slots_.size() - 1;
    for (std::size_t i = home(key);; i = (i + 1) & mask) {
      if (slots_[i].key == key) return &slots_[i].value;
      if (slots_[i].key == 0) return nullptr;
    }
  }

  // The entry for `key`, value-initialized when new. REQUIRES: key != 0.
  V& get_or_insert(std::uint64_t key, bool* inserted = nullptr) {
    if ((size_ + 1) * 2 > slots_.size()) grow();
    std::size_t mask = slots_.size() - 1;
    std::size_t i = home(key);
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
    std::size_t i = home(key);
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
      const std::size_t h = home(slots_[j].key);
      bool between = i <= j ? (i < h && h <= j) : (i < h || h <= j);
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
  // are spread rather than placed in consecutive slots: with linear probing,
  // a block of consecutive slots is one probe run, and the backward-shift
  // deletion of its oldest entry (the usual one: trees complete about in
  // order) would walk the whole run, O(trees in flight) per completion.
  // Fibonacci hashing (the top bits of key * 2^64/phi) spreads consecutive
  // keys about evenly over the table, and costs a multiply and a shift where
  // a general hash (XXH3) cost some 30 instructions per lookup.
  std::size_t home(std::uint64_t k) const {
    return static_cast<std::size_t>((k * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  void resize(std::size_t n) {
    slots_.clear();
    slots_.resize(n);
    shift_ = 64 - std::countr_zero(n);
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    resize(old.size() * 2);
    size_ = 0;
    for (auto& s : old) {
      if (s.key != 0) get_or_insert(s.key) = std::move(s.value);
    }
  }

  std::vector<Slot> slots_;
  int shift_ = 64;  // 64 - log2(slots_.size())
  std::size_t size_ = 0;
};

}  // namespace rstorm::worker
