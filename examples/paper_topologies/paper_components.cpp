#include "paper_components.hpp"

#include <time.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <stdexcept>

namespace rstorm::examples::paper {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kWriteInterval = std::chrono::milliseconds(200);

double thread_cpu_us() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

bool is_prime(std::int64_t n) {
  if (n < 2) return false;
  if (n % 2 == 0) return n == 2;
  for (std::int64_t d = 3; d * d <= n; d += 2) {
    if (n % d == 0) return false;
  }
  return true;
}

std::int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

PaperSettings settings_from_config(const Config& config) {
  PaperSettings s;
  s.shape = config.get_string("paper.topology", "linear");
  const std::string variant = config.get_string("paper.variant", "network");
  const auto v = parse_variant(variant);
  if (!v) {
    throw std::invalid_argument("paper.variant must be 'network' or 'cpu', not '" + variant + "'");
  }
  s.variant = *v;
  const bool cpu = s.variant == Variant::kCpu;
  s.payload_bytes = static_cast<int>(config.get_int("paper.payload.bytes", cpu ? 64 : 4096));
  s.spout_rate = config.get_double("paper.spout.rate", cpu ? 50.0 : 0.0);
  s.core_per_point = config.get_double("paper.cpu.core.per.point", 0.01);
  s.cpu_load = config.get_double("paper.cpu.load", 0.5);
  s.us_per_point = config.get_double("paper.cpu.us.per.point", 5.0);
  s.counter_dir = config.get_string("paper.counter.dir", "");
  s.acking = config.get_bool("paper.acking", true);
  if (s.payload_bytes < 1) throw std::invalid_argument("paper.payload.bytes must be at least 1");
  if (s.spout_rate < 0) throw std::invalid_argument("paper.spout.rate must not be negative");
  if (s.core_per_point <= 0 || s.cpu_load <= 0 || s.us_per_point < 0) {
    throw std::invalid_argument(
        "paper.cpu.core.per.point and paper.cpu.load must be positive, paper.cpu.us.per.point "
        "not negative");
  }
  return s;
}

double tuple_cost_us(const PaperSettings& settings, const Shape& shape,
                     const ComponentShape& component) {
  if (settings.variant == Variant::kNetwork) return 0;
  if (settings.spout_rate <= 0) return component.cpu * settings.us_per_point;
  // Per executor: rate_in / parallelism tuples/s must use
  // cpu points x core_per_point x load cores.
  const double rate_in = component_input_rates(shape, settings.spout_rate).at(component.name);
  const double per_executor = rate_in / component.parallelism;
  return component.cpu * settings.core_per_point * settings.cpu_load / per_executor * 1e6;
}

std::int64_t burn_cpu(double us, std::int64_t seed) {
  if (us <= 0) return seed;
  const double end = thread_cpu_us() + us;
  std::int64_t n = 100001 + 2 * (std::abs(seed) % 50000);
  std::int64_t digest = seed;
  do {
    for (int i = 0; i < 8; ++i, n += 2) {
      if (is_prime(n)) digest = digest * 31 + n;
    }
    if (n > 300000) n = 100001;
  } while (thread_cpu_us() < end);
  return digest;
}

CountFile::CountFile(const std::string& dir, const std::string& topology,
                     const std::string& component, int task) {
  if (dir.empty()) return;
  path_ = std::filesystem::path(dir) /
          (topology + "." + component + "." + std::to_string(task) + ".json");
}

void CountFile::maybe_write(std::int64_t main, std::int64_t acked, std::int64_t failed,
                            bool force) {
  if (path_.empty()) return;
  const auto now = Clock::now();
  if (!force && now - last_ < kWriteInterval) return;
  last_ = now;
  auto tmp = path_;
  tmp += ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return;  // the directory went away: counting is best effort
    out << "{\"" << main_key_ << "\": " << main << ", \"acked\": " << acked
        << ", \"failed\": " << failed << ", \"time_ms\": " << wall_ms() << "}\n";
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path_, ec);
}

PaperSpout::PaperSpout(PaperSettings settings, double cost_us)
    : settings_(std::move(settings)), cost_us_(cost_us) {}

void PaperSpout::open(const Config&, const TopologyContext& context,
                      SpoutOutputCollector& collector) {
  out_ = &collector;
  payload_.assign(static_cast<std::size_t>(settings_.payload_bytes), 'x');
  for (std::size_t i = 0; i < payload_.size(); i += 64) {
    payload_[i] = static_cast<char>('a' + (i / 64) % 26);
  }
  counts_ = CountFile(settings_.counter_dir, context.topology_name(), context.component_id(),
                      context.this_task().value);
  counts_.set_main_key("emitted");
  digest_ = context.this_task().value;
  rate_start_ = Clock::now();
}

void PaperSpout::emit_one() {
  digest_ = burn_cpu(cost_us_, digest_);
  Values values{payload_, digest_};
  if (settings_.acking) {
    out_->emit(std::move(values), Value(emitted_));
  } else {
    out_->emit(std::move(values));
  }
  ++emitted_;
}

void PaperSpout::next_tuple() {
  int burst = 16;
  if (settings_.spout_rate > 0) {
    const double secs = std::chrono::duration<double>(Clock::now() - rate_start_).count();
    const auto due = static_cast<std::int64_t>(secs * settings_.spout_rate) - (emitted_ - due_base_);
    if (due > std::max<std::int64_t>(64, static_cast<std::int64_t>(settings_.spout_rate))) {
      // More than a second behind (backpressure): do not burst to catch up.
      rate_start_ = Clock::now();
      due_base_ = emitted_;
    }
    burst = static_cast<int>(std::clamp<std::int64_t>(due, 0, 64));
  }
  for (int i = 0; i < burst; ++i) emit_one();
  counts_.maybe_write(emitted_, acked_, failed_);
}

void PaperSpout::ack(const Value&) { ++acked_; }
void PaperSpout::fail(const Value&) { ++failed_; }
void PaperSpout::close() { counts_.maybe_write(emitted_, acked_, failed_, true); }

void PaperSpout::declare_output_fields(OutputFieldsDeclarer& declarer) {
  declarer.declare(Fields{"payload", "digest"});
}

PaperBolt::PaperBolt(PaperSettings settings, double cost_us, bool sink)
    : settings_(std::move(settings)), cost_us_(cost_us), sink_(sink) {}

void PaperBolt::prepare(const Config&, const TopologyContext& context) {
  if (sink_) {
    counts_ = CountFile(settings_.counter_dir, context.topology_name(), context.component_id(),
                        context.this_task().value);
  }
}

void PaperBolt::execute(const Tuple& input, BasicOutputCollector& out) {
  const std::int64_t digest = burn_cpu(cost_us_, input.get_int(1));
  if (sink_) {
    ++received_;
    counts_.maybe_write(received_, 0, 0);
    return;
  }
  out.emit({input.get_string(0), digest});
}

void PaperBolt::cleanup() {
  if (sink_) counts_.maybe_write(received_, 0, 0, true);
}

void PaperBolt::declare_output_fields(OutputFieldsDeclarer& declarer) {
  declarer.declare(Fields{"payload", "digest"});
}

api::Result<Topology> build_paper_topology(const PaperSettings& settings) {
  const auto shape = find_shape(settings.shape, settings.variant);
  if (!shape) {
    return api::Status::error("paper.topology must be linear, diamond, star, page-load or "
                              "processing, not '" + settings.shape + "'");
  }
  const auto sinks = sink_components(*shape);
  TopologyBuilder b;
  for (const auto& c : shape->components) {
    const double cost = tuple_cost_us(settings, *shape, c);
    if (c.spout) {
      auto d = b.set_spout(c.name, [settings, cost] { return std::make_unique<PaperSpout>(settings, cost); },
                           c.parallelism);
      d.set_cpu_load(c.cpu).set_memory_load(128);
      if (c.tasks > 0) d.set_num_tasks(c.tasks);
      continue;
    }
    const bool sink = std::find(sinks.begin(), sinks.end(), c.name) != sinks.end();
    BasicBoltFactory factory = [settings, cost, sink] {
      return std::make_unique<PaperBolt>(settings, cost, sink);
    };
    auto d = b.set_bolt(c.name, factory, c.parallelism);
    d.set_cpu_load(c.cpu).set_memory_load(128);
    if (c.tasks > 0) d.set_num_tasks(c.tasks);
    for (const auto& input : c.inputs) d.shuffle_grouping(input);
  }
  return b.build();
}

}  // namespace rstorm::examples::paper
