#include "common/metrics/metrics.hpp"

#include <limits>
#include <map>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/text_serializer.h>

#include "common/metrics/metrics_impl.hpp"

namespace rstorm::metrics {
namespace {

std::map<std::string, std::string> to_map(const Labels& labels) {
  return {labels.begin(), labels.end()};
}

std::vector<prometheus::ClientMetric::Label> to_client(Labels&& labels) {
  std::vector<prometheus::ClientMetric::Label> out;
  out.reserve(labels.size());
  for (auto& [k, v] : labels) out.push_back({std::move(k), std::move(v)});
  return out;
}

}  // namespace

void Counter::increment(double by) { static_cast<prometheus::Counter*>(impl_)->Increment(by); }
double Counter::value() const { return static_cast<prometheus::Counter*>(impl_)->Value(); }
void Gauge::set(double v) { static_cast<prometheus::Gauge*>(impl_)->Set(v); }
void Gauge::increment(double by) { static_cast<prometheus::Gauge*>(impl_)->Increment(by); }
double Gauge::value() const { return static_cast<prometheus::Gauge*>(impl_)->Value(); }
void Histogram::observe(double v) { static_cast<prometheus::Histogram*>(impl_)->Observe(v); }

// ---- Snapshot

struct Snapshot::Impl {
  std::vector<prometheus::MetricFamily> families;
  std::map<std::string, std::size_t, std::less<>> index;
  std::size_t series = 0;

  prometheus::MetricFamily& family(std::string_view name, std::string_view help,
                                   prometheus::MetricType type) {
    auto it = index.find(name);
    if (it != index.end()) return families[it->second];
    index.emplace(std::string(name), families.size());
    prometheus::MetricFamily f;
    f.name = std::string(name);
    f.help = std::string(help);
    f.type = type;
    families.push_back(std::move(f));
    return families.back();
  }
};

Snapshot::Snapshot() : impl_(std::make_unique<Impl>()) {}
Snapshot::~Snapshot() = default;

void Snapshot::counter(std::string_view name, std::string_view help, Labels labels, double value) {
  auto& f = impl_->family(name, help, prometheus::MetricType::Counter);
  prometheus::ClientMetric m;
  m.label = to_client(std::move(labels));
  m.counter.value = value;
  f.metric.push_back(std::move(m));
  ++impl_->series;
}

void Snapshot::gauge(std::string_view name, std::string_view help, Labels labels, double value) {
  auto& f = impl_->family(name, help, prometheus::MetricType::Gauge);
  prometheus::ClientMetric m;
  m.label = to_client(std::move(labels));
  m.gauge.value = value;
  f.metric.push_back(std::move(m));
  ++impl_->series;
}

void Snapshot::histogram(std::string_view name, std::string_view help, Labels labels,
                         const Buckets& bounds, const std::uint64_t* counts, double sum) {
  auto& f = impl_->family(name, help, prometheus::MetricType::Histogram);
  prometheus::ClientMetric m;
  m.label = to_client(std::move(labels));
  std::uint64_t cumulative = 0;
  m.histogram.bucket.reserve(bounds.size() + 1);
  for (std::size_t i = 0; i <= bounds.size(); ++i) {
    cumulative += counts[i];
    m.histogram.bucket.push_back(
        {cumulative, i < bounds.size() ? bounds[i] : std::numeric_limits<double>::infinity()});
  }
  m.histogram.sample_count = cumulative;
  m.histogram.sample_sum = sum;
  f.metric.push_back(std::move(m));
  ++impl_->series;
}

std::size_t Snapshot::series() const { return impl_->series; }

// ---- CollectorSet

std::vector<prometheus::MetricFamily> CollectorSet::Collect() const {
  Snapshot snapshot;
  {
    std::shared_lock lock(mutex_);
    for (const auto& [id, c] : collectors_) c(snapshot);
  }
  return std::move(snapshot.impl_->families);
}

std::uint64_t CollectorSet::add(Collector c) {
  std::unique_lock lock(mutex_);
  const std::uint64_t id = next_id_++;
  collectors_.emplace(id, std::move(c));
  return id;
}

void CollectorSet::remove(std::uint64_t id) {
  std::unique_lock lock(mutex_);
  collectors_.erase(id);
}

// ---- Registry

Registry::Registry() : impl_(std::make_unique<Impl>()) {}
Registry::~Registry() = default;

namespace {

template <typename Handle, typename Metric>
Handle& wrap(std::map<void*, std::unique_ptr<Handle>>& handles, Metric& metric) {
  auto& h = handles[&metric];
  if (!h) h = std::make_unique<Handle>(Handle::make(&metric));
  return *h;
}

}  // namespace

Counter& Registry::counter(const std::string& name, const std::string& help,
                           const Labels& labels) {
  std::lock_guard lock(impl_->families_mutex);
  auto& slot = impl_->families[name];
  if (slot == nullptr) {
    slot = &prometheus::BuildCounter().Name(name).Help(help).Register(*impl_->registry);
  }
  auto& m = static_cast<prometheus::Family<prometheus::Counter>*>(slot)->Add(to_map(labels));
  return wrap(impl_->counters, m);
}

Gauge& Registry::gauge(const std::string& name, const std::string& help, const Labels& labels) {
  std::lock_guard lock(impl_->families_mutex);
  auto& slot = impl_->families[name];
  if (slot == nullptr) {
    slot = &prometheus::BuildGauge().Name(name).Help(help).Register(*impl_->registry);
  }
  auto& m = static_cast<prometheus::Family<prometheus::Gauge>*>(slot)->Add(to_map(labels));
  return wrap(impl_->gauges, m);
}

Histogram& Registry::histogram(const std::string& name, const std::string& help,
                               const Buckets& bounds, const Labels& labels) {
  std::lock_guard lock(impl_->families_mutex);
  auto& slot = impl_->families[name];
  if (slot == nullptr) {
    slot = &prometheus::BuildHistogram().Name(name).Help(help).Register(*impl_->registry);
  }
  auto& m =
      static_cast<prometheus::Family<prometheus::Histogram>*>(slot)->Add(to_map(labels), bounds);
  return wrap(impl_->histograms, m);
}

std::uint64_t Registry::add_collector(Collector collector) {
  return impl_->collectors->add(std::move(collector));
}

void Registry::remove_collector(std::uint64_t id) { impl_->collectors->remove(id); }

std::string Registry::render() const {
  auto families = impl_->registry->Collect();
  auto collected = impl_->collectors->Collect();
  families.insert(families.end(), std::make_move_iterator(collected.begin()),
                  std::make_move_iterator(collected.end()));
  return prometheus::TextSerializer().Serialize(families);
}

const Buckets& latency_buckets_seconds() {
  static const Buckets kBuckets = {1e-6,   2.5e-6, 5e-6,   1e-5,   2.5e-5, 5e-5,   1e-4, 2.5e-4,
                                   5e-4,   1e-3,   2.5e-3, 5e-3,   1e-2,   2.5e-2, 5e-2, 0.1,
                                   0.25,   0.5,    1.0,    2.5,    5.0,    10.0};
  return kBuckets;
}

}  // namespace rstorm::metrics
