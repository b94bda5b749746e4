// TransportCore: what the parts of a Transport share: options, the plan
// index, the io_context and its single thread's state, the counters. Internal
// to worker/transport.
//
// Thread contract: fields marked (io) are touched only on the io thread;
// counters are atomics readable from any thread; the rest is const
// after construction.
#pragma once

#include <spdlog/logger.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl/context.hpp>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "worker/transport/plan_index.hpp"
#include "worker/transport/transport.hpp"

namespace rstorm::transport {

class InboundSession;

struct TransportCounters {
  std::atomic<std::uint64_t> frames_sent{0}, bytes_sent{0}, tuples_sent{0};
  std::atomic<std::uint64_t> frames_received{0}, bytes_received{0}, tuples_received{0};
  std::atomic<std::uint64_t> connects{0}, reconnects{0}, connection_errors{0}, peers_stopped{0};
  std::atomic<std::uint64_t> frames_rejected{0}, connections_refused{0}, undeliverable{0};
  std::atomic<std::uint64_t> remote_backpressure_events{0}, remote_throttled_ns{0};
  std::atomic<std::uint64_t> local_backpressure_events{0};

  // Release/acquire: what happened before a count is visible to a reader of
  // it (free on x86, where the add is a locked instruction anyway).
  static void add(std::atomic<std::uint64_t>& c, std::uint64_t n) {
    c.fetch_add(n, std::memory_order_release);
  }
  TransportStats snapshot() const;
};

struct TransportCore {
  TransportCore(const worker::TopologyPlan& p, TransportOptions o, InboundHandler* h)
      : plan(p), options(std::move(o)), handler(h), log(*options.logger), index(p) {}

  const worker::TopologyPlan& plan;
  const TransportOptions options;
  InboundHandler* const handler;
  spdlog::logger& log;
  const PlanIndex index;
  boost::asio::io_context io{1};
  // The data plane's TLS context when options.tls is set; set before the io
  // thread starts.
  std::shared_ptr<boost::asio::ssl::context> tls;
  TransportCounters counters;
  // The address we listen on (options.self with the bound port); set before
  // the io thread starts.
  WorkerAddress self;

  // (io) Tasks this worker runs, by task id (nonzero: ours).
  std::vector<char> local;
  // (io) Workers allowed to connect.
  std::set<WorkerAddress> allowed;
  // Our tasks currently throttled (sent whole to every sender on each change,
  // every second, and on connect). Updated by the caller of set_backpressure
  // under the mutex, never by a posted delta: Asio runs a handler posted from
  // the io thread after one posted meanwhile from another thread, so deltas
  // could arrive in the wrong order and leave a lifted throttle on for good.
  mutable std::mutex throttled_mutex;
  std::set<std::int32_t> throttled;  // GUARDED_BY(throttled_mutex)
  std::vector<TaskId> throttled_tasks() const {
    std::lock_guard lock(throttled_mutex);
    std::vector<TaskId> out;
    for (std::int32_t t : throttled) out.emplace_back(t);
    return out;
  }
  // (io) Open inbound connections.
  std::set<std::shared_ptr<InboundSession>> sessions;
  // (io) Set once stop() began.
  bool stopping = false;

  // Hands `batch` to the handler's undeliverable(), counting it. Any thread.
  void give_up(worker::Batch& batch, std::string_view reason) {
    if (batch.empty()) return;
    TransportCounters::add(counters.undeliverable, batch.size());
    handler->undeliverable(batch, reason);
    batch.clear();
  }
};

}  // namespace rstorm::transport
