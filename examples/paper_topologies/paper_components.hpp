// The spout and bolt of the paper's topologies.
//
// Network-bound variant: the spout emits a payload of paper.payload.bytes
// (default 4096) as fast as it is allowed, every bolt forwards it unchanged,
// nearly free of CPU: the cost of a tuple is moving its bytes.
// CPU-bound variant: a small payload (default 64 bytes); every spout and bolt
// spends a fixed amount of CPU time per tuple in a prime search (thread CPU
// time, so the work is the same whatever else shares the core), sized from
// the component's CPU points so that at paper.spout.rate each executor really
// uses about paper.cpu.load of the cores its points stand for.
//
// Sinks (components nobody subscribes to) count what they receive; spouts count
// what they emit, and with acking what was acked and failed. With
// paper.counter.dir set, each task writes its counts to
// <dir>/<topology>.<component>.<task>.json at most every 200 ms as one JSON
// object {"received"|"emitted","acked","failed", "time_ms"} (replaced
// atomically), which is how bench/rack_experiment measures throughput.
//
// Thread contract: as every spout and bolt, one instance is used by one
// executor thread only.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>

#include <rstorm/rstorm.hpp>

#include "paper_shapes.hpp"

namespace rstorm::examples::paper {

// Everything the components read from the topology config.
struct PaperSettings {
  std::string shape = "linear";        // paper.topology
  Variant variant = Variant::kNetwork;  // paper.variant
  int payload_bytes = 4096;            // paper.payload.bytes; default 4096 (network), 64 (cpu)
  double spout_rate = 0;               // paper.spout.rate, tuples/s per spout executor; 0 = as fast as allowed; default 0 (network), 50 (cpu)
  double core_per_point = 0.01;        // paper.cpu.core.per.point: cores one CPU point stands for; default 0.01 (100 points = one core)
  double cpu_load = 0.5;               // paper.cpu.load: share of its points an executor uses at paper.spout.rate; default 0.5
  double us_per_point = 5;             // paper.cpu.us.per.point: per-tuple CPU when paper.spout.rate is 0; default 5 µs per point
  std::string counter_dir;             // paper.counter.dir; default "": no count files
  bool acking = true;                  // paper.acking; default true
};

// Reads the paper.* keys; throws std::invalid_argument naming a bad value.
PaperSettings settings_from_config(const Config& config);

// CPU microseconds each tuple costs `component` (0 in the network variant).
double tuple_cost_us(const PaperSettings& settings, const Shape& shape,
                     const ComponentShape& component);

// Spends `us` microseconds of this thread's CPU time testing odd numbers for
// primality by trial division; returns a digest of the primes found (so the
// work cannot be optimised away), seeded by `seed`.
std::int64_t burn_cpu(double us, std::int64_t seed);

// A task's counters as a small JSON file, rewritten at most every 200 ms.
class CountFile {
 public:
  CountFile() = default;
  // An empty `dir` disables the file.
  CountFile(const std::string& dir, const std::string& topology, const std::string& component,
            int task);
  // Writes when 200 ms passed since the last write, or always with `force`.
  void maybe_write(std::int64_t main, std::int64_t acked, std::int64_t failed, bool force = false);
  void set_main_key(std::string key) { main_key_ = std::move(key); }

 private:
  std::filesystem::path path_;
  std::string main_key_ = "received";
  std::chrono::steady_clock::time_point last_{};
};

class PaperSpout : public Spout {
 public:
  PaperSpout(PaperSettings settings, double cost_us);
  void open(const Config& conf, const TopologyContext& context,
            SpoutOutputCollector& collector) override;
  void next_tuple() override;
  void ack(const Value& msg_id) override;
  void fail(const Value& msg_id) override;
  void close() override;
  void declare_output_fields(OutputFieldsDeclarer& declarer) override;

 private:
  void emit_one();

  const PaperSettings settings_;
  const double cost_us_;
  SpoutOutputCollector* out_ = nullptr;
  std::string payload_;
  std::int64_t emitted_ = 0, acked_ = 0, failed_ = 0;
  std::int64_t due_base_ = 0;  // emitted_ when the rate clock was last reset
  std::chrono::steady_clock::time_point rate_start_{};
  std::int64_t digest_ = 1;
  CountFile counts_;
};

// Forwards each input (after its CPU work); a sink only counts.
class PaperBolt : public BasicBolt {
 public:
  PaperBolt(PaperSettings settings, double cost_us, bool sink);
  void prepare(const Config& conf, const TopologyContext& context) override;
  void execute(const Tuple& input, BasicOutputCollector& out) override;
  void cleanup() override;
  void declare_output_fields(OutputFieldsDeclarer& declarer) override;

 private:
  const PaperSettings settings_;
  const double cost_us_;
  const bool sink_;
  std::int64_t received_ = 0;
  CountFile counts_;
};

// The whole topology for settings.shape and settings.variant, with the
// paper's parallelism and resource hints.
api::Result<Topology> build_paper_topology(const PaperSettings& settings);

}  // namespace rstorm::examples::paper
