// AckTable<V>: a map from a non-zero 64-bit tree root to V, for the tables a
// spout (its trees in flight) and an acker (the XOR of each tree) look up once
// or more per tuple. Single thread.
//
// Roots are made by Emitter::next_root: the producing executor's index + 1 in
// the high 24 bits, a counter in the low 40. The trees one producer has in
// flight are therefore a window of consecutive counters that slides forward,
// completing mostly oldest first. The table keeps one ring per producer, in
// which a root sits at exactly (counter / stride) mod the ring's size: an
// insert, a lookup and an erase each touch one slot, and the slots touched
// one after another are neighbours in memory, so the hardware prefetcher
// keeps them in cache however wide the table is. (Placing roots by a hash
// spreads them over the whole table: at tens of thousands of trees in flight
// every lookup missed the cache, and those misses were a third of the
// spout's time.)
//
// When a root's slot is taken by another (a tree still pending after its ring
// wrapped) and the ring is not half full, the older tree moves out to a
// shared overflow, an open-addressing hash map; roots not made by next_root
// live there too. A ring grows when it wraps at over half full. It shrinks
// once it is a 32nd full, so that a burst of trees in flight does not leave it
// megabytes wide for good; no sooner, because a ring's width costs memory but
// not cache (only the window's slots are touched), while resizing costs time:
// trees in flight swing by 10x under load, and shrinking at an eighth full
// resized the rings often enough to cost 5 % of the spout's and the acker's
// time. No allocation per entry.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

namespace rstorm::worker {

namespace detail {

// An open-addressing hash map from a non-zero key to V: keys placed by
// Fibonacci hashing (the top bits of key * 2^64/phi), linear probing,
// backward-shift deletion. Grows at half full, shrinks at an eighth full
// (down to its initial size).
template <typename V>
class ScatterTable {
 public:
  explicit ScatterTable(std::size_t initial = 16) : min_slots_(round_up(initial)) {
    resize(min_slots_);
  }

  std::size_t size() const { return size_; }
  std::size_t capacity() const { return slots_.size(); }

  V* find(std::uint64_t key) {
    std::size_t mask = slots_.size() - 1;
    for (std::size_t i = home(key);; i = (i + 1) & mask) {
      if (slots_[i].key == key) return &slots_[i].value;
      if (slots_[i].key == 0) return nullptr;
    }
  }

  // REQUIRES: key != 0.
  V& get_or_insert(std::uint64_t key, bool* inserted = nullptr) {
    if ((size_ + 1) * 2 > slots_.size()) rehash(slots_.size() * 2);
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
    if (size_ * 8 < slots_.size() && slots_.size() > min_slots_) {
      rehash(std::max(min_slots_, round_up(size_ * 4)));
    }
    return true;
  }

  template <typename F>
  void for_each(F&& f) {
    for (auto& s : slots_) {
      if (s.key != 0) f(s.key, s.value);
    }
  }

  static std::size_t round_up(std::size_t n) { return std::bit_ceil(std::max<std::size_t>(n, 16)); }

 private:
  struct Slot {
    std::uint64_t key = 0;
    V value{};
  };

  std::size_t home(std::uint64_t k) const {
    return static_cast<std::size_t>((k * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  void resize(std::size_t n) {
    slots_.clear();
    slots_.resize(n);
    shift_ = 64 - std::countr_zero(n);
  }
  void rehash(std::size_t n) {
    std::vector<Slot> old = std::move(slots_);
    resize(n);
    size_ = 0;
    for (auto& s : old) {
      if (s.key != 0) get_or_insert(s.key) = std::move(s.value);
    }
  }

  std::size_t min_slots_;
  std::vector<Slot> slots_;
  int shift_ = 64;  // 64 - log2(slots_.size())
  std::size_t size_ = 0;
};

}  // namespace detail

template <typename V>
class AckTable {
 public:
  // Producers with a ring of their own: executors 0 .. kMaxProducers - 2.
  // Roots of later ones (and roots not made by next_root) use the overflow.
  static constexpr std::uint64_t kMaxProducers = 1 << 16;
  static constexpr std::size_t kMinRing = 64;

  // `stride`: the difference between consecutive roots of one producer that
  // reach this table. A spout's own table sees all its roots (1); each of N
  // ackers sees every N-th (Emitter::acker_for picks root % N), so it passes N.
  explicit AckTable(std::uint64_t stride = 1) : stride_(std::max<std::uint64_t>(stride, 1)) {}

  std::size_t size() const { return size_; }
  // Trees in the overflow (tests: how often the rings fell back to it).
  std::size_t overflow_size() const { return overflow_.size(); }
  // Slots over all rings and the overflow: the table's memory, in slots.
  std::size_t capacity() const {
    std::size_t n = overflow_.capacity();
    for (const auto& r : rings_) n += r.slots.size();
    return n;
  }

  V* find(std::uint64_t key) {
    if (Ring* r = existing_ring(key)) {
      Slot& s = r->slots[r->index(key, stride_)];
      if (s.key == key) return &s.value;
    }
    return overflow_.size() > 0 ? overflow_.find(key) : nullptr;
  }

  // The entry for `key`, value-initialized when new. REQUIRES: key != 0.
  V& get_or_insert(std::uint64_t key, bool* inserted = nullptr) {
    Ring* r = ring_of(key);
    if (r == nullptr) return insert_overflow(key, inserted);
    if (r->slots.empty()) r->resize(kMinRing, stride_, overflow_);
    Slot* s = &r->slots[r->index(key, stride_)];
    if (s->key == key) {
      if (inserted) *inserted = false;
      return s->value;
    }
    if (overflow_.size() > 0) {
      if (V* v = overflow_.find(key)) {
        if (inserted) *inserted = false;
        return *v;
      }
    }
    if (s->key != 0) {
      // Taken by another tree: the ring has wrapped onto one still pending.
      // A ring over half full grows; otherwise that older tree moves out.
      if ((r->size + 1) * 2 > r->slots.size()) {
        r->resize(r->slots.size() * 2, stride_, overflow_);
        s = &r->slots[r->index(key, stride_)];
      }
      if (s->key != 0) {
        overflow_.get_or_insert(s->key) = std::move(s->value);
        --r->size;
      }
    }
    s->key = key;
    s->value = V();
    ++r->size;
    ++size_;
    if (inserted) *inserted = true;
    return s->value;
  }

  // Pointers into the table are invalid after an erase (a ring may shrink).
  bool erase(std::uint64_t key) {
    if (Ring* r = existing_ring(key)) {
      Slot& s = r->slots[r->index(key, stride_)];
      if (s.key == key) {
        s.key = 0;
        s.value = V();
        --r->size;
        --size_;
        if (r->size * 32 < r->slots.size() && r->slots.size() > kMinRing) {
          r->resize(std::max(kMinRing, detail::ScatterTable<V>::round_up(r->size * 4)), stride_,
                    overflow_);
        }
        return true;
      }
    }
    if (overflow_.size() == 0 || !overflow_.erase(key)) return false;
    --size_;
    return true;
  }

  // Calls f(key, value&) for every entry; f must not insert or erase.
  template <typename F>
  void for_each(F&& f) {
    for (auto& r : rings_) {
      if (r.size == 0) continue;
      for (auto& s : r.slots) {
        if (s.key != 0) f(s.key, s.value);
      }
    }
    overflow_.for_each(f);
  }

 private:
  struct Slot {
    std::uint64_t key = 0;
    V value{};
  };
  struct Ring {
    std::vector<Slot> slots;  // a power of two of them, or none yet
    std::size_t size = 0;

    std::size_t index(std::uint64_t key, std::uint64_t stride) const {
      std::uint64_t counter = key & ((std::uint64_t{1} << 40) - 1);
      if (stride > 1) counter /= stride;
      return static_cast<std::size_t>(counter) & (slots.size() - 1);
    }
    // Re-places the ring's trees in `n` slots; one whose slot is taken moves
    // to `overflow`.
    void resize(std::size_t n, std::uint64_t stride, detail::ScatterTable<V>& overflow) {
      std::vector<Slot> old = std::move(slots);
      slots.clear();
      slots.resize(n);
      size = 0;
      for (auto& o : old) {
        if (o.key == 0) continue;
        Slot& s = slots[index(o.key, stride)];
        if (s.key == 0) {
          s = std::move(o);
          ++size;
        } else {
          overflow.get_or_insert(o.key) = std::move(o.value);
        }
      }
    }
  };

  // The ring of `key`'s producer, made when new; nullptr: the overflow's.
  Ring* ring_of(std::uint64_t key) {
    const std::uint64_t producer = key >> 40;
    if (producer == 0 || producer >= kMaxProducers) return nullptr;
    if (producer >= rings_.size()) rings_.resize(producer + 1);
    return &rings_[producer];
  }
  // The ring of `key`'s producer if it has slots; nullptr otherwise.
  Ring* existing_ring(std::uint64_t key) {
    const std::uint64_t producer = key >> 40;
    if (producer >= rings_.size() || rings_[producer].slots.empty()) return nullptr;
    return &rings_[producer];
  }
  V& insert_overflow(std::uint64_t key, bool* inserted) {
    bool fresh = false;
    V& v = overflow_.get_or_insert(key, &fresh);
    if (fresh) ++size_;
    if (inserted) *inserted = fresh;
    return v;
  }

  std::uint64_t stride_;
  std::vector<Ring> rings_;  // index: producer (the root's high 24 bits)
  detail::ScatterTable<V> overflow_;
  std::size_t size_ = 0;
};

}  // namespace rstorm::worker
