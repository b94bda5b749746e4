#include "rstorm/metrics.hpp"

#include <algorithm>
#include <deque>
#include <map>
#include <stdexcept>
#include <tuple>

#include "rstorm/topology_context.hpp"

namespace rstorm {
namespace {

std::string_view kind_name(MetricKind k) {
  switch (k) {
    case MetricKind::kCounter:
      return "counter";
    case MetricKind::kGauge:
      return "gauge";
    case MetricKind::kHistogram:
      return "histogram";
  }
  return "?";
}

std::string where(const std::string& component, TaskId task) {
  return "component '" + component + "' task " + std::to_string(task.value);
}

void check_name(std::string_view name, const std::string& component, TaskId task) {
  auto bad = [&](const std::string& why) {
    throw std::invalid_argument("metric '" + std::string(name) + "' of " + where(component, task) + ": " + why);
  };
  if (name.empty()) bad("a metric needs a name");
  const auto head = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':'; };
  if (!head(name[0])) bad("a name starts with a letter, '_' or ':' (Prometheus's rule)");
  for (char c : name) {
    if (!head(c) && !(c >= '0' && c <= '9')) {
      bad(std::string("'") + c + "' cannot be in a name: letters, digits, '_' and ':' only (Prometheus's rule)");
    }
  }
  if (name.substr(0, 7) == "rstorm_" || name.substr(0, 2) == "__") {
    bad("names starting with 'rstorm_' or '__' are rstorm's own");
  }
}

}  // namespace

HistogramMetric::HistogramMetric(std::vector<double> bounds)
    : bounds_(std::move(bounds)), counts_(new std::atomic<std::uint64_t>[bounds_.size() + 1]) {
  for (std::size_t i = 0; i <= bounds_.size(); ++i) counts_[i].store(0, std::memory_order_relaxed);
}

void HistogramMetric::observe(double v) {
  const std::size_t bucket =
      static_cast<std::size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), v) - bounds_.begin());
  counts_[bucket].fetch_add(1, std::memory_order_relaxed);
  double now = sum_.load(std::memory_order_relaxed);
  while (!sum_.compare_exchange_weak(now, now + v, std::memory_order_relaxed)) {
  }
}

std::vector<std::uint64_t> HistogramMetric::counts() const {
  std::vector<std::uint64_t> out(bounds_.size() + 1);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = counts_[i].load(std::memory_order_relaxed);
  return out;
}

std::uint64_t HistogramMetric::count() const {
  std::uint64_t n = 0;
  for (std::size_t i = 0; i <= bounds_.size(); ++i) n += counts_[i].load(std::memory_order_relaxed);
  return n;
}

struct UserMetrics::Impl {
  struct Family {
    MetricKind kind;
    std::string help;
    std::vector<double> bounds;
    std::string first;  // where it was registered first
  };
  std::mutex mutex;
  std::map<std::string, Family, std::less<>> families;
  std::map<std::tuple<std::string, std::string, int>, std::size_t> index;  // name, component, task
  std::deque<Entry> entries;
  std::deque<CounterMetric> counters;
  std::deque<GaugeMetric> gauges;
  std::deque<std::unique_ptr<HistogramMetric>> histograms;

  // The entry for (name, component, task), made on first use; throws on a clash.
  Entry& get(const std::string& component, TaskId task, std::string_view name, std::string_view help,
             MetricKind kind, const std::vector<double>* bounds) {
    check_name(name, component, task);
    if (bounds != nullptr) {
      if (bounds->empty()) {
        throw std::invalid_argument("histogram '" + std::string(name) + "' of " + where(component, task) +
                                    ": it needs at least one bucket bound");
      }
      for (std::size_t i = 1; i < bounds->size(); ++i) {
        if (!((*bounds)[i - 1] < (*bounds)[i])) {
          throw std::invalid_argument("histogram '" + std::string(name) + "' of " + where(component, task) +
                                      ": bucket bounds must ascend");
        }
      }
    }
    std::lock_guard lock(mutex);
    auto fam = families.find(name);
    if (fam == families.end()) {
      fam = families.emplace(std::string(name), Family{kind, std::string(help), bounds ? *bounds : std::vector<double>{},
                                                       where(component, task)}).first;
    } else if (fam->second.kind != kind) {
      throw std::invalid_argument("metric '" + std::string(name) + "' of " + where(component, task) +
                                  " is asked for as a " + std::string(kind_name(kind)) + ", but " +
                                  fam->second.first + " registered it as a " +
                                  std::string(kind_name(fam->second.kind)));
    } else if (bounds != nullptr && fam->second.bounds != *bounds) {
      throw std::invalid_argument("histogram '" + std::string(name) + "' of " + where(component, task) +
                                  " has other bucket bounds than " + fam->second.first + " gave it");
    }
    const auto key = std::make_tuple(std::string(name), component, task.value);
    if (auto it = index.find(key); it != index.end()) return entries[it->second];
    Entry e;
    e.component = component;
    e.task = task;
    e.name = std::string(name);
    e.help = fam->second.help.empty() ? std::string(help) : fam->second.help;
    e.kind = kind;
    switch (kind) {
      case MetricKind::kCounter:
        e.counter = &counters.emplace_back();
        break;
      case MetricKind::kGauge:
        e.gauge = &gauges.emplace_back();
        break;
      case MetricKind::kHistogram:
        e.histogram = histograms.emplace_back(std::make_unique<HistogramMetric>(*bounds)).get();
        break;
    }
    index.emplace(key, entries.size());
    return entries.emplace_back(std::move(e));
  }
};

UserMetrics::UserMetrics() : impl_(std::make_unique<Impl>()) {}
UserMetrics::~UserMetrics() = default;

CounterMetric& UserMetrics::counter(const std::string& component, TaskId task, std::string_view name,
                                    std::string_view help) {
  return const_cast<CounterMetric&>(*impl_->get(component, task, name, help, MetricKind::kCounter, nullptr).counter);
}

GaugeMetric& UserMetrics::gauge(const std::string& component, TaskId task, std::string_view name,
                                std::string_view help) {
  return const_cast<GaugeMetric&>(*impl_->get(component, task, name, help, MetricKind::kGauge, nullptr).gauge);
}

HistogramMetric& UserMetrics::histogram(const std::string& component, TaskId task, std::string_view name,
                                        std::vector<double> bounds, std::string_view help) {
  return const_cast<HistogramMetric&>(
      *impl_->get(component, task, name, help, MetricKind::kHistogram, &bounds).histogram);
}

std::vector<UserMetrics::Entry> UserMetrics::entries() const {
  std::lock_guard lock(impl_->mutex);
  return std::vector<Entry>(impl_->entries.begin(), impl_->entries.end());
}

CounterMetric& TopologyContext::counter(std::string_view name, std::string_view help) const {
  return metrics_->counter(component_id_, task_, name, help);
}

GaugeMetric& TopologyContext::gauge(std::string_view name, std::string_view help) const {
  return metrics_->gauge(component_id_, task_, name, help);
}

HistogramMetric& TopologyContext::histogram(std::string_view name, std::vector<double> bounds,
                                            std::string_view help) const {
  return metrics_->histogram(component_id_, task_, name, std::move(bounds), help);
}

}  // namespace rstorm
