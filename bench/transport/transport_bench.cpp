// rstorm-bench-transport: envelopes/s through the wire codec (encode, decode)
// and through two Transports connected over 127.0.0.1 in one process, plus
// delivery latency percentiles at a fixed offered rate. Medians of --runs runs.
// --tls-compare: the two-process figures in plaintext and over mutual TLS
// (storm.messaging.netty.tls.*, certificates from a throw-away CA), runs
// alternating, each run printed, and the ratio of the medians.
#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "common/security/certificates.hpp"
#include "rstorm/topology_builder.hpp"
#include "rstorm/worker/topology_plan.hpp"
#include "worker/transport/codec.hpp"
#include "worker/transport/transport.hpp"

namespace {

using namespace rstorm;
using Clock = std::chrono::steady_clock;

// Every transport of the bench speaks TLS with these files when set.
std::optional<security::TlsFiles> g_tls;

class Spout1 : public Spout {
 public:
  void open(const Config&, const TopologyContext&, SpoutOutputCollector&) override {}
  void next_tuple() override {}
  void declare_output_fields(OutputFieldsDeclarer& d) override { d.declare(Fields({"n", "w"})); }
};
class Bolt1 : public Bolt {
 public:
  void prepare(const Config&, const TopologyContext&, OutputCollector&) override {}
  void execute(const Tuple&) override {}
  void declare_output_fields(OutputFieldsDeclarer&) override {}
};

// "sink" tasks 1..2 on B, "src" task 3 and the acker (4) on A.
std::unique_ptr<worker::TopologyPlan> plan() {
  TopologyBuilder b;
  b.set_spout("src", [] { return std::make_unique<Spout1>(); });
  b.set_bolt("sink", [] { return std::make_unique<Bolt1>(); }, 2).shuffle_grouping("src");
  auto t = b.build();
  Config c;
  c.set("topology.acker.executors", std::int64_t{1}, "bench");
  return std::move(*worker::make_plan("bench", c, *t));
}

// A small tuple, like the throughput bench's: an int and a short word, one anchor.
worker::Envelope envelope(const worker::TopologyPlan& p, std::int64_t n) {
  worker::Envelope e;
  e.dest = TaskId(1 + static_cast<std::int32_t>(n % 2));
  e.tuple = Tuple(&p.find_component("src")->find_stream("default")->info, TaskId(3),
                  Values{Value(n), Value("sentence")});
  e.tuple.mutable_anchors().xor_in(static_cast<std::uint64_t>(n) * 7919u, 0x9e3779b97f4a7c15ULL);
  return e;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

double bench_encode(const worker::TopologyPlan& p, std::int64_t n) {
  transport::PlanIndex index(p);
  worker::Batch batch;
  for (int i = 0; i < 256; ++i) batch.push_back(envelope(p, i));
  transport::FrameEncoder enc;
  const auto start = Clock::now();
  std::size_t bytes = 0;
  for (std::int64_t done = 0; done < n; done += 256) {
    enc.clear();
    enc.add_tuples(index, batch, 256);
    bytes += enc.size();
  }
  const double s = seconds_since(start);
  if (bytes == 0) std::puts("");
  return static_cast<double>(n) / s;
}

double bench_decode(const worker::TopologyPlan& p, std::int64_t n, std::size_t* frame_bytes) {
  transport::PlanIndex index(p);
  worker::Batch batch;
  for (int i = 0; i < 256; ++i) batch.push_back(envelope(p, i));
  transport::FrameEncoder enc;
  enc.add_tuples(index, batch, 256);
  *frame_bytes = enc.size();
  std::vector<char> local(index.task_limit(), 1);
  transport::FrameDecoder dec(index, &local);
  transport::ControlMessage control;
  worker::Batch out;
  out.reserve(256);
  const auto start = Clock::now();
  for (std::int64_t done = 0; done < n; done += 256) {
    out.clear();
    if (!dec.decode(enc.data() + 4, enc.size() - 4, out, control).is_ok()) return 0;
  }
  return static_cast<double>(n) / seconds_since(start);
}

// Counts deliveries; records latency from a timestamp in field 0 when asked.
class Receiver : public transport::InboundHandler {
 public:
  void deliver(worker::Batch& batch) override {
    if (stamp) {
      const auto now = Clock::now().time_since_epoch().count();
      std::lock_guard lock(mutex);
      for (const auto& e : batch) {
        if (e.kind == worker::MessageKind::kTuple) {
          latencies_ns.push_back(now - e.tuple.values()[0].as_int());
        }
      }
    }
    delivered.fetch_add(batch.size(), std::memory_order_relaxed);
    batch.clear();
  }
  void undeliverable(worker::Batch& batch, std::string_view) override {
    lost.fetch_add(batch.size());
    batch.clear();
  }
  std::atomic<std::uint64_t> delivered{0}, lost{0};
  bool stamp = false;
  std::mutex mutex;
  std::vector<std::int64_t> latencies_ns;
};

struct Pair {
  Receiver ra, rb;
  std::unique_ptr<transport::Transport> a, b;
  transport::WorkerAddress addr_a, addr_b;

  explicit Pair(const worker::TopologyPlan& p) {
    auto log = std::make_shared<spdlog::logger>("bench", std::make_shared<spdlog::sinks::null_sink_mt>());
    auto opts = [&](std::vector<TaskId> local) {
      transport::TransportOptions o;
      o.topology_id = "bench";
      o.self = {"127.0.0.1", 0};
      o.local_tasks = std::move(local);
      o.logger = log;
      o.tls = g_tls;
      return o;
    };
    a = transport::Transport::start(p, opts({TaskId(3), TaskId(4)}), &ra).value();
    b = transport::Transport::start(p, opts({TaskId(1), TaskId(2)}), &rb).value();
    addr_a = a->listen_address();
    addr_b = b->listen_address();
    a->set_peers({{addr_b, {TaskId(1), TaskId(2)}}});
    b->set_peers({{addr_a, {TaskId(3), TaskId(4)}}});
  }
};

void push(worker::TupleSink* sink, worker::Batch& batch) {
  while (!sink->try_push(batch)) sink->wait_for_space(std::chrono::milliseconds(1));
}

// Tuples A -> B (and with `acks`, as many control messages B -> A at once).
double bench_loopback(const worker::TopologyPlan& p, std::int64_t n, bool acks) {
  Pair pair(p);
  worker::Batch tmpl;
  for (int i = 0; i < 256; ++i) tmpl.push_back(envelope(p, i));
  worker::TupleSink* to_b = pair.a->sink(pair.addr_b);
  worker::TupleSink* to_a = pair.b->sink(pair.addr_a);
  { worker::Batch warm(tmpl.begin(), tmpl.begin() + 1); push(to_b, warm); }
  while (pair.rb.delivered.load() < 1) std::this_thread::yield();
  const auto start = Clock::now();
  std::thread acker;
  if (acks) {
    acker = std::thread([&] {
      worker::Batch b;
      for (std::int64_t done = 0; done < n; done += 256) {
        for (int i = 0; i < 256; ++i) {
          auto& e = b.emplace_back();
          e.dest = TaskId(3);
          e.set_control(worker::MessageKind::kAck, static_cast<std::uint64_t>(done + i), 1, TaskId(4));
        }
        push(to_a, b);
      }
    });
  }
  worker::Batch batch;
  for (std::int64_t done = 0; done < n; done += 256) {
    batch = tmpl;  // the producer builds its tuples (copies), as an executor would
    push(to_b, batch);
  }
  while (pair.rb.delivered.load() < static_cast<std::uint64_t>(n) + 1) std::this_thread::yield();
  if (acks) {
    acker.join();
    while (pair.ra.delivered.load() < static_cast<std::uint64_t>(n)) std::this_thread::yield();
  }
  return static_cast<double>(n) / seconds_since(start);
}

std::shared_ptr<spdlog::logger> quiet_logger() {
  return std::make_shared<spdlog::logger>("bench", std::make_shared<spdlog::sinks::null_sink_mt>());
}

transport::TransportOptions options(std::vector<TaskId> local) {
  transport::TransportOptions o;
  o.topology_id = "bench";
  o.self = {"127.0.0.1", 0};
  o.local_tasks = std::move(local);
  o.logger = quiet_logger();
  o.tls = g_tls;
  return o;
}

// A -> B with B in a child process: tuples/s until B has them all and says so
// (one control message back). With `acks`, B answers every batch with as many
// ack messages.
double bench_two_processes(const worker::TopologyPlan& p, std::int64_t n, bool acks) {
  int to_child[2], to_parent[2];
  if (pipe(to_child) != 0 || pipe(to_parent) != 0) return 0;
  const pid_t pid = fork();
  if (pid == 0) {
    close(to_child[1]);
    close(to_parent[0]);
    Receiver echo;
    auto b = transport::Transport::start(p, options({TaskId(1), TaskId(2)}), &echo).value();
    const int port_b = b->listen_address().port;
    int port_a = 0;
    if (write(to_parent[1], &port_b, sizeof port_b) != sizeof port_b) _exit(1);
    if (read(to_child[0], &port_a, sizeof port_a) != sizeof port_a) _exit(1);
    const transport::WorkerAddress addr_a{"127.0.0.1", port_a};
    worker::TupleSink* back = b->sink(addr_a);
    b->set_peers({{addr_a, {TaskId(3), TaskId(4)}}});
    // This thread answers: an ack per delivered tuple (with `acks`), then "done".
    std::uint64_t acked = 0;
    worker::Batch replies;
    for (;;) {
      const std::uint64_t d = echo.delivered.load();
      while (acks && acked < d) {
        auto& e = replies.emplace_back();
        e.dest = TaskId(3);
        e.set_control(worker::MessageKind::kAck, acked++, 1, TaskId(4));
        if (replies.size() == 256 || acked == d) push(back, replies);
      }
      if (d >= static_cast<std::uint64_t>(n)) break;
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    auto& e = replies.emplace_back();
    e.dest = TaskId(3);
    e.set_control(worker::MessageKind::kAckComplete, 0, 0, TaskId(4));
    push(back, replies);
    char c;
    while (read(to_child[0], &c, 1) > 0) {
    }
    b->stop();
    _exit(0);
  }
  close(to_child[0]);
  close(to_parent[1]);
  struct Done : Receiver {
    std::atomic<bool> done{false};
    void deliver(worker::Batch& batch) override {
      for (const auto& e : batch) {
        if (e.kind == worker::MessageKind::kAckComplete) done = true;
      }
      Receiver::deliver(batch);
    }
  } ra;
  auto a = transport::Transport::start(p, options({TaskId(3), TaskId(4)}), &ra).value();
  const int port_a = a->listen_address().port;
  int port_b = 0;
  if (read(to_parent[0], &port_b, sizeof port_b) != sizeof port_b) return 0;
  if (write(to_child[1], &port_a, sizeof port_a) != sizeof port_a) return 0;
  const transport::WorkerAddress addr_b{"127.0.0.1", port_b};
  a->set_peers({{addr_b, {TaskId(1), TaskId(2)}}});
  while (a->stats().connects < 1) std::this_thread::yield();
  worker::Batch tmpl;
  for (int i = 0; i < 256; ++i) tmpl.push_back(envelope(p, i));
  worker::TupleSink* to_b = a->sink(addr_b);
  const auto start = Clock::now();
  worker::Batch batch;
  for (std::int64_t done = 0; done < n; done += 256) {
    batch = tmpl;
    push(to_b, batch);
  }
  while (!ra.done.load()) std::this_thread::sleep_for(std::chrono::microseconds(100));
  const double rate = static_cast<double>(n) / seconds_since(start);
  close(to_child[1]);
  int status = 0;
  waitpid(pid, &status, 0);
  close(to_parent[0]);
  return rate;
}

// Offered `rate` tuples/s for `seconds`, bursts every 1 ms; latency per tuple.
std::vector<double> bench_latency(const worker::TopologyPlan& p, double rate, double seconds) {
  Pair pair(p);
  pair.rb.stamp = true;
  worker::TupleSink* to_b = pair.a->sink(pair.addr_b);
  const auto tick = std::chrono::microseconds(1000);
  const auto per_tick = static_cast<std::int64_t>(rate / 1000.0);
  const auto start = Clock::now();
  auto next = start;
  std::int64_t sent = 0;
  worker::Batch batch;
  while (seconds_since(start) < seconds) {
    next += tick;
    std::this_thread::sleep_until(next);
    for (std::int64_t i = 0; i < per_tick; ++i) {
      worker::Envelope e = envelope(p, i);
      e.tuple.mutable_values()[0] = Value(static_cast<std::int64_t>(Clock::now().time_since_epoch().count()));
      batch.push_back(std::move(e));
    }
    push(to_b, batch);
    sent += per_tick;
  }
  while (pair.rb.delivered.load() < static_cast<std::uint64_t>(sent)) std::this_thread::yield();
  std::vector<std::int64_t> lat;
  {
    std::lock_guard lock(pair.rb.mutex);
    lat = pair.rb.latencies_ns;
  }
  std::sort(lat.begin(), lat.end());
  auto pct = [&](double q) {
    return static_cast<double>(lat[static_cast<std::size_t>(q * static_cast<double>(lat.size() - 1))]) / 1e6;
  };
  return {pct(0.5), pct(0.99), pct(0.999), static_cast<double>(sent) / seconds_since(start)};
}

// A throw-away CA and a certificate naming 127.0.0.1, in a temp folder.
std::optional<security::TlsFiles> make_certificates(const std::filesystem::path& dir) {
  auto ca = security::CertificateAuthority::create("bench CA");
  if (!ca || !(*ca)->write_certificate(dir / "ca.pem")) return std::nullopt;
  security::CertificateRequest host;
  host.common_name = "supervisor";
  host.ip_addresses = {"127.0.0.1"};
  if (!(*ca)->issue(host, dir / "host.pem", dir / "host-key.pem")) return std::nullopt;
  return security::TlsFiles{.cert = (dir / "host.pem").string(),
                            .key = (dir / "host-key.pem").string(),
                            .ca = (dir / "ca.pem").string()};
}

int compare_tls(const worker::TopologyPlan& p, int runs, std::int64_t tuples) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("rstorm-bench-transport-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto files = make_certificates(dir);
  if (!files) {
    std::fprintf(stderr, "cannot make certificates in %s\n", dir.c_str());
    return 1;
  }
  for (bool acks : {false, true}) {
    std::vector<double> plain, tls;
    for (int r = 0; r < runs; ++r) {
      g_tls.reset();
      plain.push_back(bench_two_processes(p, tuples, acks));
      g_tls = files;
      tls.push_back(bench_two_processes(p, tuples, acks));
      std::printf("run %d%s: plaintext %6.2f M tuples/s, TLS %6.2f M tuples/s (%.2fx)\n", r + 1,
                  acks ? " + acks" : "", plain.back() / 1e6, tls.back() / 1e6,
                  tls.back() / plain.back());
    }
    std::printf(
        "two processes A->B%s, median of %d: plaintext %.2f M tuples/s, TLS %.2f M "
        "tuples/s, ratio %.2f\n",
        acks ? " + acks" : "", runs, median(plain) / 1e6, median(tls) / 1e6,
        median(tls) / median(plain));
  }
  g_tls.reset();
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("Throughput of rstorm's worker-to-worker transport");
  int runs = 5;
  std::int64_t tuples = 2'000'000;
  double rate = 100'000, seconds = 5;
  app.add_option("--runs", runs, "runs per figure (the median is printed)");
  app.add_option("--tuples", tuples, "envelopes per run");
  app.add_option("--rate", rate, "offered tuples/s for the latency run");
  app.add_option("--seconds", seconds, "length of the latency run");
  bool codec_only = false;
  app.add_flag("--codec-only", codec_only, "only the encode and decode figures");
  bool tls_compare = false;
  app.add_flag("--tls-compare", tls_compare,
               "two processes, plaintext against mutual TLS, runs alternating");
  CLI11_PARSE(app, argc, argv);
  spdlog::set_level(spdlog::level::warn);

  auto p = plan();
  if (tls_compare) return compare_tls(*p, runs, tuples);
  std::vector<double> enc, dec, loop, loop_acks;
  std::size_t frame_bytes = 0;
  for (int r = 0; r < runs; ++r) {
    enc.push_back(bench_encode(*p, tuples));
    dec.push_back(bench_decode(*p, tuples, &frame_bytes));
  }
  std::printf("encode:               %8.2f M envelopes/s (frame of 256: %zu bytes, %.1f per envelope)\n",
              median(enc) / 1e6, frame_bytes, static_cast<double>(frame_bytes) / 256.0);
  std::printf("decode:               %8.2f M envelopes/s\n", median(dec) / 1e6);
  if (codec_only) return 0;
  for (int r = 0; r < runs; ++r) loop.push_back(bench_loopback(*p, tuples, false));
  std::printf("loopback A->B:        %8.2f M tuples/s\n", median(loop) / 1e6);
  for (int r = 0; r < runs; ++r) loop_acks.push_back(bench_loopback(*p, tuples, true));
  std::printf("loopback A->B + acks: %8.2f M tuples/s (and as many acks B->A)\n",
              median(loop_acks) / 1e6);
  std::vector<double> procs, procs_acks;
  for (int r = 0; r < runs; ++r) procs.push_back(bench_two_processes(*p, tuples, false));
  std::printf("two processes A->B:   %8.2f M tuples/s\n", median(procs) / 1e6);
  for (int r = 0; r < runs; ++r) procs_acks.push_back(bench_two_processes(*p, tuples, true));
  std::printf("two processes + acks: %8.2f M tuples/s (and an ack per tuple B->A)\n",
              median(procs_acks) / 1e6);
  auto l = bench_latency(*p, rate, seconds);
  std::printf("latency at %.0f/s:   p50 %.3f ms, p99 %.3f ms, p99.9 %.3f ms (achieved %.0f/s)\n",
              rate, l[0], l[1], l[2], l[3]);
  return 0;
}
