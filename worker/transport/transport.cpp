#include "worker/transport/transport.hpp"

#include <pthread.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <future>
#include <map>
#include <mutex>
#include <thread>

#include "worker/transport/core.hpp"
#include "worker/transport/inbound_session.hpp"
#include "worker/transport/outbound_channel.hpp"
#include "worker/transport/stream.hpp"

namespace rstorm::transport {

namespace asio = boost::asio;
using asio::ip::tcp;

std::string WorkerAddress::to_string() const { return host + ":" + std::to_string(port); }

Status listen_on(tcp::acceptor& acceptor, const WorkerAddress& address) {
  boost::system::error_code ec;
  tcp::resolver resolver(acceptor.get_executor());
  const std::string host = address.host.empty() ? std::string("127.0.0.1") : address.host;
  auto results = resolver.resolve(host, std::to_string(address.port), ec);
  if (ec || results.empty()) {
    return {ErrorCode::kInvalidArgument,
            "cannot resolve this worker's address " + address.to_string() + ": " + ec.message()};
  }
  const tcp::endpoint endpoint = results.begin()->endpoint();
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return {ErrorCode::kUnavailable,
            "cannot listen for other workers on " + address.to_string() + ": " + ec.message()};
  }
  return {};
}

TransportStats TransportCounters::snapshot() const {
  TransportStats s;
  auto get = [](const std::atomic<std::uint64_t>& c) { return c.load(std::memory_order_acquire); };
  s.frames_sent = get(frames_sent);
  s.bytes_sent = get(bytes_sent);
  s.tuples_sent = get(tuples_sent);
  s.frames_received = get(frames_received);
  s.bytes_received = get(bytes_received);
  s.tuples_received = get(tuples_received);
  s.connects = get(connects);
  s.reconnects = get(reconnects);
  s.connection_errors = get(connection_errors);
  s.peers_stopped = get(peers_stopped);
  s.frames_rejected = get(frames_rejected);
  s.connections_refused = get(connections_refused);
  s.undeliverable = get(undeliverable);
  s.remote_backpressure_events = get(remote_backpressure_events);
  s.remote_throttled_ns = get(remote_throttled_ns);
  s.local_backpressure_events = get(local_backpressure_events);
  return s;
}

struct Transport::Impl {
  Impl(const worker::TopologyPlan& plan, TransportOptions options, InboundHandler* handler)
      : core(plan, std::move(options), handler), acceptor(core.io) {}

  TransportCore core;  // first: destroyed last
  tcp::acceptor acceptor;
  asio::steady_timer resend_timer{core.io};
  asio::steady_timer stop_timer{core.io};
  int quiet_resends = 0;  // (io) resends since the throttled set was last non-empty
  std::thread io_thread;
  std::mutex mutex;  // guards channels, stopped
  std::map<WorkerAddress, std::unique_ptr<OutboundChannel>> channels;
  bool stopped = false;

  // Runs `f` on the io thread and waits for it (inline when already there or
  // when the io thread is gone).
  template <typename F>
  void on_io(F&& f) {
    if (core.io.get_executor().running_in_this_thread() || !io_thread.joinable() ||
        core.io.stopped()) {
      f();
      return;
    }
    std::promise<void> done;
    asio::post(core.io, [&] {
      f();
      done.set_value();
    });
    done.get_future().wait();
  }

  Status listen() {
    if (Status s = listen_on(acceptor, core.options.self); !s) return s;
    const std::string& host = core.options.self.host.empty() ? std::string("127.0.0.1")
                                                             : core.options.self.host;
    core.self = WorkerAddress{host, acceptor.local_endpoint().port()};
    return {};
  }

  void accept() {
    acceptor.async_accept([this](const boost::system::error_code& ec, tcp::socket socket) {
      if (core.stopping) return;
      if (ec) {
        if (ec != asio::error::operation_aborted) {
          core.log.warn("accepting a worker connection on {} failed: {}", core.self.to_string(),
                        ec.message());
          accept();
        }
        return;
      }
      auto session = std::make_shared<InboundSession>(core, std::move(socket), core.tls.get());
      core.sessions.insert(session);
      session->start();
      accept();
    });
  }

  // (io) Tasks of this worker: options.local_tasks, or every plan task no peer runs.
  void compute_local(const std::vector<PeerWorker>& peers) {
    core.local.assign(core.index.task_limit(), 0);
    if (!core.options.local_tasks.empty()) {
      for (TaskId t : core.options.local_tasks) {
        if (core.index.is_task(t)) core.local[static_cast<std::size_t>(t.value)] = 1;
      }
      return;
    }
    for (std::size_t t = 0; t < core.local.size(); ++t) {
      core.local[t] = core.index.is_task(TaskId(static_cast<std::int32_t>(t))) ? 1 : 0;
    }
    for (const PeerWorker& p : peers) {
      if (p.address == core.self) continue;
      for (TaskId t : p.tasks) {
        if (core.index.is_task(t)) core.local[static_cast<std::size_t>(t.value)] = 0;
      }
    }
  }

  // (io) The whole throttled set to every sender: what a sender holds is
  // replaced, so it cannot keep a throttle that was lifted.
  void send_backpressure_state() {
    const std::vector<TaskId> tasks = core.throttled_tasks();
    for (const auto& s : core.sessions) s->send_backpressure_state(tasks);
  }

  // (io) Sends the state again every second while anything is or was lately
  // throttled (a repair, as Storm re-sends its backpressure status).
  void resend_backpressure_state() {
    resend_timer.expires_after(std::chrono::seconds(1));
    resend_timer.async_wait([this](const boost::system::error_code& ec) {
      if (ec || core.stopping) return;
      const bool none = core.throttled_tasks().empty();
      if (!none || quiet_resends < 3) send_backpressure_state();
      quiet_resends = none ? quiet_resends + 1 : 0;
      resend_backpressure_state();
    });
  }

  OutboundChannel* channel(const WorkerAddress& peer) {
    std::lock_guard lock(mutex);
    auto& c = channels[peer];
    if (!c) c = std::make_unique<OutboundChannel>(core, peer);
    return c.get();
  }
};

Transport::Transport(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Transport::~Transport() { stop(); }

Result<std::unique_ptr<Transport>> Transport::start(const worker::TopologyPlan& plan,
                                                    TransportOptions options,
                                                    InboundHandler* handler) {
  if (!options.logger) return Status(ErrorCode::kInvalidArgument, "transport needs a logger");
  if (handler == nullptr) {
    return Status(ErrorCode::kInvalidArgument, "transport needs an inbound handler");
  }
  if (options.reconnect_min.count() < 1) options.reconnect_min = std::chrono::milliseconds(1);
  if (options.reconnect_max < options.reconnect_min) options.reconnect_max = options.reconnect_min;
  std::shared_ptr<asio::ssl::context> tls;
  if (options.tls) {
    auto context = make_tls_context(*options.tls);
    if (!context) return context.status();
    tls = std::move(*context);
  }
  auto impl = std::make_unique<Impl>(plan, std::move(options), handler);
  impl->core.tls = std::move(tls);
  if (Status s = impl->listen(); !s.is_ok()) return s;
  impl->compute_local({});
  impl->accept();
  impl->resend_backpressure_state();
  Impl* raw = impl.get();
  impl->io_thread = std::thread([raw] {
    pthread_setname_np(pthread_self(), "rs:io");  // as top -H and the benches show it
    auto guard = asio::make_work_guard(raw->core.io);
    raw->core.io.run();
  });
  return std::unique_ptr<Transport>(new Transport(std::move(impl)));
}

void Transport::stop() {
  Impl& m = *impl_;
  {
    std::lock_guard lock(m.mutex);
    if (m.stopped) return;
    m.stopped = true;
  }
  // Everything is closed on the io thread, which then ends.
  asio::post(m.core.io, [&m] {
    m.core.stopping = true;
    boost::system::error_code ignored;
    m.acceptor.close(ignored);
    m.resend_timer.cancel();
    auto sessions = m.core.sessions;
    std::vector<OutboundChannel*> channels;
    {
      std::lock_guard lock(m.mutex);
      for (auto& [address, c] : m.channels) channels.push_back(c.get());
    }
    // Each sender is told this worker stops (a goodbye, so that it does not
    // report a lost connection), and each channel lets its write in flight
    // end, so that no peer sees a frame cut in two, for at most
    // options.stop_flush; then the io thread ends.
    auto left = std::make_shared<std::size_t>(sessions.size() + channels.size() + 1);
    auto stopped = [&m, left] {
      if (--*left == 0) m.core.io.stop();
    };
    m.stop_timer.expires_after(m.core.options.stop_flush);
    m.stop_timer.async_wait([&m, channels](const boost::system::error_code& ec) {
      if (ec) return;
      auto unclosed = m.core.sessions;
      for (const auto& s : unclosed) s->close("the transport is stopping");
      for (OutboundChannel* c : channels) {
        c->set_mode(OutboundChannel::Mode::kStopped, "the transport is stopping");
      }
    });
    for (const auto& s : sessions) s->say_goodbye("the transport is stopping", stopped);
    for (OutboundChannel* c : channels) c->stop(stopped);
    stopped();
  });
  if (m.io_thread.joinable()) m.io_thread.join();
}

void Transport::set_peers(std::vector<PeerWorker> peers) {
  Impl& m = *impl_;
  std::vector<OutboundChannel*> listed;
  for (const PeerWorker& p : peers) {
    if (p.address != m.core.self) listed.push_back(m.channel(p.address));
  }
  m.on_io([&] {
    if (m.core.stopping) return;
    m.compute_local(peers);
    m.core.allowed.clear();
    for (const PeerWorker& p : peers) m.core.allowed.insert(p.address);
    // Inbound connections from workers that left the assignment are closed.
    auto sessions = m.core.sessions;
    for (const auto& s : sessions) {
      if (s->accepted() && !m.core.allowed.contains(s->claimed())) {
        m.core.log.info("closing the connection from worker {}: no longer in the assignment",
                        s->claimed().to_string());
        s->close("the sending worker left the assignment");
      }
    }
    std::vector<OutboundChannel*> all;
    {
      std::lock_guard lock(m.mutex);
      for (auto& [address, c] : m.channels) all.push_back(c.get());
    }
    for (OutboundChannel* c : all) {
      if (std::find(listed.begin(), listed.end(), c) != listed.end()) {
        c->set_mode(OutboundChannel::Mode::kListed, "");
      } else if (m.core.allowed.contains(c->peer()) || c->peer() == m.core.self) {
        continue;
      } else {
        c->set_mode(OutboundChannel::Mode::kRemoved,
                    "worker " + c->peer().to_string() + " is no longer in the assignment");
      }
    }
  });
}

worker::TupleSink* Transport::sink(const WorkerAddress& peer) {
  OutboundChannel* c = impl_->channel(peer);
  bool stopped;
  {
    std::lock_guard lock(impl_->mutex);
    stopped = impl_->stopped;
  }
  if (stopped) {
    impl_->on_io([&] { c->set_mode(OutboundChannel::Mode::kStopped, "the transport is stopped"); });
  }
  return c;
}

void Transport::set_backpressure(const std::vector<TaskId>& tasks, bool on) {
  if (tasks.empty()) return;
  Impl& m = *impl_;
  if (on) TransportCounters::add(m.core.counters.local_backpressure_events, 1);
  {
    std::lock_guard lock(m.core.throttled_mutex);
    for (TaskId t : tasks) {
      if (on) {
        m.core.throttled.insert(t.value);
      } else {
        m.core.throttled.erase(t.value);
      }
    }
  }
  // Whatever order the posted sends run in, the last one carries the latest set.
  asio::post(m.core.io, [&m] { m.send_backpressure_state(); });
}

TransportStats Transport::stats() const {
  TransportStats s = impl_->core.counters.snapshot();
  std::lock_guard lock(impl_->mutex);
  for (const auto& [address, c] : impl_->channels) s.remote_throttled_ns += c->throttled_ns_now();
  return s;
}

std::map<WorkerAddress, std::uint64_t> Transport::peer_tuples_sent() const {
  std::map<WorkerAddress, std::uint64_t> out;
  std::lock_guard lock(impl_->mutex);
  for (const auto& [address, c] : impl_->channels) out[address] = c->tuples_sent();
  return out;
}

WorkerAddress Transport::listen_address() const { return impl_->core.self; }

}  // namespace rstorm::transport
