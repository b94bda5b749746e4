// User-defined metrics: counters, gauges and histograms that a spout or bolt
// registers in open()/prepare() through its TopologyContext and updates from
// next_tuple()/execute():
//
//   void prepare(const Config&, const TopologyContext& context, ...) {
//     words_ = &context.counter("words_seen_total", "words this task split");
//     lengths_ = &context.histogram("sentence_length_words", {4, 8, 16, 32});
//   }
//   void execute(...) { words_->inc(n); lengths_->observe(n); }
//
// A worker exports them on its /metrics as Prometheus series of that name with
// the labels topology, component and task; `rstorm local` sums them per
// component in its final summary. Updates are lock-free (relaxed atomics).
//
// Names follow Prometheus ([a-zA-Z_:][a-zA-Z0-9_:]*); "rstorm_" and "__" are
// reserved. A bad name, a name registered as two kinds, or a histogram
// registered with other bounds throws std::invalid_argument naming it (in
// open()/prepare() that ends the component with the message). Registering the
// same name twice on one task returns the same metric.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "rstorm/ids.hpp"

namespace rstorm {

class CounterMetric {
 public:
  void inc(std::uint64_t by = 1) { value_.fetch_add(by, std::memory_order_relaxed); }
  std::uint64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::uint64_t> value_{0};
};

class GaugeMetric {
 public:
  void set(double v) { value_.store(v, std::memory_order_relaxed); }
  void add(double by) {
    double now = value_.load(std::memory_order_relaxed);
    while (!value_.compare_exchange_weak(now, now + by, std::memory_order_relaxed)) {
    }
  }
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

class HistogramMetric {
 public:
  // REQUIRES: `bounds` ascending (checked at registration).
  explicit HistogramMetric(std::vector<double> bounds);
  void observe(double v);
  // Upper bounds of the buckets; +Inf is implied.
  const std::vector<double>& bounds() const { return bounds_; }
  // Observations per bucket, NOT cumulative; bounds().size() + 1 entries.
  std::vector<std::uint64_t> counts() const;
  std::uint64_t count() const;
  double sum() const { return sum_.load(std::memory_order_relaxed); }

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<std::uint64_t>[]> counts_;
  std::atomic<double> sum_{0};
};

enum class MetricKind { kCounter, kGauge, kHistogram };

// Every user metric of one topology in one process (the runtime owns one and
// gives it to every task's context). Thread-safe; metrics never move.
class UserMetrics {
 public:
  UserMetrics();
  ~UserMetrics();
  UserMetrics(const UserMetrics&) = delete;
  UserMetrics& operator=(const UserMetrics&) = delete;

  CounterMetric& counter(const std::string& component, TaskId task, std::string_view name,
                         std::string_view help);
  GaugeMetric& gauge(const std::string& component, TaskId task, std::string_view name,
                     std::string_view help);
  HistogramMetric& histogram(const std::string& component, TaskId task, std::string_view name,
                             std::vector<double> bounds, std::string_view help);

  struct Entry {
    std::string component;
    TaskId task;
    std::string name;
    std::string help;
    MetricKind kind = MetricKind::kCounter;
    const CounterMetric* counter = nullptr;
    const GaugeMetric* gauge = nullptr;
    const HistogramMetric* histogram = nullptr;
  };
  // What is registered now, in registration order.
  std::vector<Entry> entries() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rstorm
