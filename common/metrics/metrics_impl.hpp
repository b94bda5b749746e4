// Internal to common/metrics: the prometheus-cpp objects behind Registry.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>

#include <prometheus/collectable.h>
#include <prometheus/registry.h>

#include "common/metrics/metrics.hpp"

namespace rstorm::metrics {

// Calls the collectors of a Registry at scrape time.
class CollectorSet final : public prometheus::Collectable {
 public:
  std::vector<prometheus::MetricFamily> Collect() const override;

  std::uint64_t add(Collector c);
  void remove(std::uint64_t id);

 private:
  mutable std::shared_mutex mutex_;
  std::uint64_t next_id_ = 1;                    // GUARDED_BY(mutex_)
  std::map<std::uint64_t, Collector> collectors_;  // GUARDED_BY(mutex_)
};

struct Registry::Impl {
  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
  std::shared_ptr<CollectorSet> collectors = std::make_shared<CollectorSet>();
  std::mutex families_mutex;  // guards the maps below (family creation)
  std::map<std::string, void*> families;  // name -> prometheus::Family<T>*
  std::map<void*, std::unique_ptr<Counter>> counters;  // by prometheus series
  std::map<void*, std::unique_ptr<Gauge>> gauges;
  std::map<void*, std::unique_ptr<Histogram>> histograms;
};

}  // namespace rstorm::metrics
