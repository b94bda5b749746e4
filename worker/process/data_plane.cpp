#include "worker/process/data_plane.hpp"

#include <pthread.h>

#include <algorithm>
#include <map>

namespace rstorm::worker_process {

using worker::Batch;
using worker::Envelope;
using worker::MessageKind;

DataPlane::DataPlane(SlotRuntime& runtime, std::shared_ptr<spdlog::logger> logger,
                     DataPlaneOptions options)
    : runtime_(runtime), logger_(std::move(logger)), options_(options) {}

DataPlane::~DataPlane() { stop(); }

void DataPlane::start(transport::Transport* transport) {
  transport_ = transport;
  thread_ = std::jthread([this](std::stop_token stop) {
    pthread_setname_np(pthread_self(), "rs:dataplane");  // so that top -H and perf name it
    run(stop);
  });
}

void DataPlane::stop() {
  stopped_.store(true);
  if (!thread_.joinable()) return;
  thread_.request_stop();
  wake_.notify_all();
  thread_.join();
  transport_ = nullptr;
}

void DataPlane::deliver(Batch& batch) {
  if (!traffic_.load(std::memory_order_relaxed)) {
    traffic_.store(true, std::memory_order_relaxed);
    if (idle_wait_.load(std::memory_order_relaxed)) {
      { std::lock_guard lock(mutex_); }
      wake_.notify_all();  // back to checking every check_interval
    }
  }
  Batch foreign;
  const bool in_rings = runtime_.runtime().deliver_remote(batch, &foreign, &owed_wakes_);
  if (!foreign.empty()) undeliverable(foreign, "their tasks are not run by this worker");
  // An executor whose queue overflowed is throttled at once, not at the next
  // check: its senders stop after at most what they already had in flight.
  if (!in_rings) check_backpressure();
}

void DataPlane::read_delivered() {
  for (worker::ReceiveQueue* q : owed_wakes_) q->wake();
  owed_wakes_.clear();
}

void DataPlane::undeliverable(Batch& batch, std::string_view reason) {
  if (batch.empty()) return;
  undeliverable_.fetch_add(batch.size(), std::memory_order_relaxed);
  const std::int64_t now = worker::steady_now_ns();
  std::int64_t last = last_log_ns_.load(std::memory_order_relaxed);
  const bool stopped = stopped_.load();
  if (now - last >= 1'000'000'000 && last_log_ns_.compare_exchange_strong(last, now)) {
    // A worker told to stop drops what it still held by design: said at info.
    logger_->log(stopped ? spdlog::level::info : spdlog::level::warn,
                 "[topology={}] {} envelopes not delivered ({}); {} (logged at most once a second)",
                 runtime_.runtime().plan().name, batch.size(), reason,
                 stopped ? "this worker is stopping: their spouts time their trees out"
                         : "failing their tuple trees so spouts replay");
  }
  // Once stopped (the worker is shutting down) nobody would send the fails:
  // the spouts of other workers time these trees out.
  if (!stopped) fail_trees(batch);
  batch.clear();
}

void DataPlane::fail_trees(Batch& batch) {
  const worker::TopologyPlan& plan = runtime_.runtime().plan();
  if (!plan.acking()) return;
  auto acker_for = [&](std::uint64_t root) {
    return plan.acker_tasks[root % plan.acker_tasks.size()];
  };
  std::vector<Failure> out;
  for (const Envelope& e : batch) {
    switch (e.kind) {
      case MessageKind::kTuple: {
        const auto& anchors = e.tuple.anchors();
        for (std::size_t i = 0; i < anchors.size(); ++i) {
          if (anchors[i].root != 0) out.push_back({acker_for(anchors[i].root), MessageKind::kFail, anchors[i].root});
        }
        break;
      }
      case MessageKind::kAckInit: {
        // The spout's own inits: tell the spout directly when it runs here.
        const bool spout_here = runtime_.runtime().runs_task(e.task());
        for (std::size_t i = 0; i < e.messages(); ++i) {
          if (spout_here) {
            out.push_back({e.task(), MessageKind::kAckFailed, e.root(i)});
          } else {
            out.push_back({e.dest, MessageKind::kFail, e.root(i)});
          }
        }
        break;
      }
      case MessageKind::kAck:
        for (std::size_t i = 0; i < e.messages(); ++i) {
          out.push_back({e.dest, MessageKind::kFail, e.root(i)});
        }
        break;
      default:
        // A lost fail or completion: the spout times the tree out. Never
        // re-failed, so an unreachable acker cannot make a loop.
        break;
    }
  }
  if (out.empty()) return;
  std::sort(out.begin(), out.end(), [](const Failure& a, const Failure& b) {
    return std::tie(a.root, a.dest.value) < std::tie(b.root, b.dest.value);
  });
  out.erase(std::unique(out.begin(), out.end(),
                        [](const Failure& a, const Failure& b) {
                          return a.root == b.root && a.dest == b.dest;
                        }),
            out.end());
  {
    std::lock_guard lock(mutex_);
    failures_.insert(failures_.end(), out.begin(), out.end());
  }
  wake_.notify_all();
}

void DataPlane::run(std::stop_token stop) {
  std::vector<Failure> failures;
  auto interval = options_.check_interval;
  while (!stop.stop_requested()) {
    // Traffic or a throttled task: check every check_interval; otherwise
    // back off, doubling, to idle_check_interval.
    const bool busy = traffic_.exchange(false, std::memory_order_relaxed) ||
                      throttled_tasks_.load(std::memory_order_relaxed) > 0;
    interval = busy ? options_.check_interval
                    : std::min(options_.idle_check_interval, interval * 2);
    const bool idle = interval > options_.check_interval;
    idle_wait_.store(idle, std::memory_order_relaxed);
    {
      std::unique_lock lock(mutex_);
      wake_.wait_for(lock, stop, interval, [&] {
        return !failures_.empty() || (idle && traffic_.load(std::memory_order_relaxed));
      });
      failures.swap(failures_);
    }
    idle_wait_.store(false, std::memory_order_relaxed);
    if (!failures.empty()) send_failures(failures, stop);
    failures.clear();
    check_backpressure();
  }
}

void DataPlane::send_failures(std::vector<Failure>& failures, const std::stop_token& stop) {
  std::map<worker::TupleSink*, Batch> by_sink;
  for (const Failure& f : failures) {
    if (!runtime_.runtime().plan().task_executor.empty() &&
        (f.dest.value <= 0 ||
         static_cast<std::size_t>(f.dest.value) >= runtime_.runtime().plan().task_executor.size())) {
      continue;
    }
    Envelope& e = by_sink[runtime_.runtime().sink_of(f.dest)].emplace_back();
    e.dest = f.dest;
    e.set_control(f.kind, f.root, 0, TaskId());
  }
  // Forced: this thread also throttles and releases the local executors, so
  // it must never wait on one of them.
  for (auto& [sink, batch] : by_sink) {
    const std::size_t n = batch.size();
    sink->force_push(batch);
    trees_failed_.fetch_add(n, std::memory_order_relaxed);
  }
}

void DataPlane::check_backpressure() {
  std::lock_guard lock(backpressure_mutex_);
  const auto& executors = runtime_.runtime().executors();
  if (throttled_.size() != executors.size()) throttled_.assign(executors.size(), 0);
  std::vector<TaskId> on, off;
  for (std::size_t i = 0; i < executors.size(); ++i) {
    const worker::ReceiveQueue& q = executors[i]->queue();
    const double depth = static_cast<double>(q.depth());
    const double capacity = static_cast<double>(q.capacity());
    const auto& tasks = executors[i]->plan().tasks;
    if (!throttled_[i] && depth >= options_.high_watermark * capacity) {
      throttled_[i] = 1;
      on.insert(on.end(), tasks.begin(), tasks.end());
      engaged_.fetch_add(1, std::memory_order_relaxed);
      throttled_tasks_.fetch_add(tasks.size(), std::memory_order_relaxed);
    } else if (throttled_[i] && depth <= options_.low_watermark * capacity) {
      throttled_[i] = 0;
      off.insert(off.end(), tasks.begin(), tasks.end());
      released_.fetch_add(1, std::memory_order_relaxed);
      throttled_tasks_.fetch_sub(tasks.size(), std::memory_order_relaxed);
    }
  }
  if (transport_ == nullptr) return;
  if (!on.empty()) transport_->set_backpressure(on, true);
  if (!off.empty()) transport_->set_backpressure(off, false);
}

DataPlaneCounters DataPlane::counters() const {
  DataPlaneCounters c;
  c.undeliverable_envelopes = undeliverable_.load(std::memory_order_relaxed);
  c.trees_failed = trees_failed_.load(std::memory_order_relaxed);
  c.backpressure_engaged = engaged_.load(std::memory_order_relaxed);
  c.backpressure_released = released_.load(std::memory_order_relaxed);
  c.throttled_tasks = throttled_tasks_.load(std::memory_order_relaxed);
  return c;
}

}  // namespace rstorm::worker_process
