// The metrics interface of rstorm: a Registry of counter, gauge and histogram
// families, plus collectors that are called only at scrape time (so that hot
// path counters, e.g. an executor's relaxed atomics, are read only when
// Prometheus asks). Backed by prometheus-cpp, which no other code includes.
//
// Thread contract: Registry is thread-safe: families may be created, series
// updated and collectors added or removed from any thread, also while a scrape
// runs. Counter/Gauge/Histogram handles are thread-safe and stay valid as long
// as the Registry. A collector runs on the HTTP server's thread during a
// scrape; it must not call back into the Registry.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rstorm::metrics {

// Label name/value pairs, e.g. {{"topology", "wc"}, {"component", "split"}}.
using Labels = std::vector<std::pair<std::string, std::string>>;

// Upper bounds of histogram buckets, in base units (seconds, bytes), ascending;
// +Inf is implied.
using Buckets = std::vector<double>;

class Counter {
 public:
  void increment(double by = 1.0);
  double value() const;

 private:
  friend class Registry;
  explicit Counter(void* impl) : impl_(impl) {}
 public:
  // For the registry only.
  static Counter make(void* impl) { return Counter(impl); }

 private:
  void* impl_;
};

class Gauge {
 public:
  void set(double value);
  void increment(double by = 1.0);
  double value() const;

 private:
  friend class Registry;
  explicit Gauge(void* impl) : impl_(impl) {}
 public:
  // For the registry only.
  static Gauge make(void* impl) { return Gauge(impl); }

 private:
  void* impl_;
};

class Histogram {
 public:
  void observe(double value);

 private:
  friend class Registry;
  explicit Histogram(void* impl) : impl_(impl) {}
 public:
  // For the registry only.
  static Histogram make(void* impl) { return Histogram(impl); }

 private:
  void* impl_;
};

// What a collector writes during one scrape: samples of families that are
// computed from the caller's own state. Samples of one family name may come
// from several collectors; the first help text wins.
class Snapshot {
 public:
  Snapshot();
  ~Snapshot();
  Snapshot(const Snapshot&) = delete;
  Snapshot& operator=(const Snapshot&) = delete;

  void counter(std::string_view name, std::string_view help, Labels labels, double value);
  void gauge(std::string_view name, std::string_view help, Labels labels, double value);
  // `counts[i]`: observations in bucket i, NOT cumulative; counts.size() ==
  // bounds.size() + 1 (the last is the +Inf bucket).
  void histogram(std::string_view name, std::string_view help, Labels labels,
                 const Buckets& bounds, const std::uint64_t* counts, double sum);

  // Number of series written so far (a histogram counts as one).
  std::size_t series() const;

 private:
  friend class CollectorSet;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class CollectorSet;
using Collector = std::function<void(Snapshot&)>;

class Registry {
 public:
  Registry();
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // A series of the family `name` with `labels`: created on first use, the
  // same object for the same name and labels afterwards. REQUIRES: a name is
  // used for one kind of metric only; histograms of one name share `bounds`.
  Counter& counter(const std::string& name, const std::string& help, const Labels& labels = {});
  Gauge& gauge(const std::string& name, const std::string& help, const Labels& labels = {});
  Histogram& histogram(const std::string& name, const std::string& help, const Buckets& bounds,
                       const Labels& labels = {});

  // Adds a collector called at each scrape; returns an id for remove_collector.
  std::uint64_t add_collector(Collector collector);
  // After it returns the collector is not running and will not run again.
  void remove_collector(std::uint64_t id);

  // The text exposition format of everything registered, as a scrape returns
  // it (used by tests and the benchmark of scrape size).
  std::string render() const;

  // For Exposer: the prometheus-cpp collectables (type-erased here so that
  // no prometheus type appears in this header).
  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// Removes a collector when destroyed. Movable.
class CollectorHandle {
 public:
  CollectorHandle() = default;
  CollectorHandle(Registry& registry, Collector collector)
      : registry_(&registry), id_(registry.add_collector(std::move(collector))) {}
  CollectorHandle(CollectorHandle&& other) noexcept { *this = std::move(other); }
  CollectorHandle& operator=(CollectorHandle&& other) noexcept {
    reset();
    registry_ = std::exchange(other.registry_, nullptr);
    id_ = other.id_;
    return *this;
  }
  ~CollectorHandle() { reset(); }
  void reset() {
    if (registry_ != nullptr) std::exchange(registry_, nullptr)->remove_collector(id_);
  }

 private:
  Registry* registry_ = nullptr;
  std::uint64_t id_ = 0;
};

// Latency buckets in seconds, 1 us to 10 s, shared by the runtime's latency
// histograms and dashboards.
const Buckets& latency_buckets_seconds();

}  // namespace rstorm::metrics
