// DataPlane: what joins a worker's SlotRuntime to the transport.
//  - Inbound (transport::InboundHandler, on the transport's io thread):
//    deliver() hands arrived envelopes to the local executors' queues and
//    never waits: a full queue takes them into its overflow and its tasks are
//    throttled at every peer at once, so the io thread keeps reading every
//    connection; undeliverable() fails the tuple trees of envelopes that will
//    never reach their peer, so spouts replay.
//  - Failing trees: a kFail for each tree to its acker (a local queue or a
//    remote sink), or a kAckFailed straight to the local spout when the lost
//    envelope was the spout's own init. Pushed from this class's thread, never
//    from the io thread, so that a full queue cannot stall the transport.
//  - Backpressure: the same thread checks the local receive queues every
//    `check_interval` (and deliver() when a queue overflowed); a queue over the
//    high watermark throttles its tasks at every peer
//    (Transport::set_backpressure(tasks, true)) until it is back under the low
//    watermark, its overflow empty. While nothing arrives from peers and no
//    task is throttled, there is nothing a check could throttle or release:
//    the interval doubles up to `idle_check_interval`, and the first delivery
//    after that brings it back (an idle worker costs no polling).
//
// Thread contract: deliver/undeliverable from any thread (the transport's io
// thread, or the one calling Transport::set_peers/stop); start/stop from the
// owner; counters from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include <spdlog/logger.h>

#include "worker/process/slot_runtime.hpp"
#include "worker/transport/transport.hpp"

namespace rstorm::worker_process {

struct DataPlaneOptions {
  // Fractions of a receive queue's capacity (in batches). Defaults 0.9 / 0.5.
  double high_watermark = 0.9;
  double low_watermark = 0.5;
  // How often the queues are checked. Default 2 ms.
  std::chrono::microseconds check_interval{2000};
  // The longest interval while no envelope arrives and no task is throttled.
  std::chrono::microseconds idle_check_interval{200000};
};

struct DataPlaneCounters {
  std::uint64_t undeliverable_envelopes = 0;  // handed to undeliverable() or not for this worker
  std::uint64_t trees_failed = 0;             // kFail / kAckFailed sent because of them
  std::uint64_t backpressure_engaged = 0;     // times a local queue throttled its tasks
  std::uint64_t backpressure_released = 0;    // times it released them
  std::uint64_t throttled_tasks = 0;          // tasks throttled right now
};

class DataPlane final : public transport::InboundHandler {
 public:
  // REQUIRES: `runtime` and `logger` outlive this.
  DataPlane(SlotRuntime& runtime, std::shared_ptr<spdlog::logger> logger,
            DataPlaneOptions options = {});
  ~DataPlane() override;
  DataPlane(const DataPlane&) = delete;
  DataPlane& operator=(const DataPlane&) = delete;

  // Starts the thread. `transport` (may be null: no remote backpressure) is
  // borrowed until stop().
  void start(transport::Transport* transport);
  // Stops the thread; later undeliverable envelopes are only counted.
  void stop();

  void deliver(worker::Batch& batch) override;
  // Wakes the executors deliver() left asleep.
  void read_delivered() override;
  void undeliverable(worker::Batch& batch, std::string_view reason) override;

  DataPlaneCounters counters() const;

 private:
  // A control message to send: kFail to an acker or kAckFailed to a spout.
  struct Failure {
    TaskId dest;
    worker::MessageKind kind;
    std::uint64_t root;
  };

  void fail_trees(worker::Batch& batch);
  void run(std::stop_token stop);
  void send_failures(std::vector<Failure>& failures, const std::stop_token& stop);
  void check_backpressure();

  SlotRuntime& runtime_;
  const std::shared_ptr<spdlog::logger> logger_;
  const DataPlaneOptions options_;
  transport::Transport* transport_ = nullptr;  // set before the thread starts

  // The queues deliver() left asleep since the last read_delivered(): the
  // io thread's only.
  std::vector<worker::ReceiveQueue*> owed_wakes_;
  std::mutex mutex_;
  std::condition_variable_any wake_;
  std::vector<Failure> failures_;  // GUARDED_BY(mutex_)

  // Which local executors are throttled (the thread's checks and deliver()).
  std::mutex backpressure_mutex_;
  std::vector<char> throttled_;  // GUARDED_BY(backpressure_mutex_)

  std::atomic<std::uint64_t> undeliverable_{0};
  std::atomic<std::uint64_t> trees_failed_{0};
  std::atomic<std::uint64_t> engaged_{0};
  std::atomic<std::uint64_t> released_{0};
  std::atomic<std::uint64_t> throttled_tasks_{0};
  std::atomic<std::int64_t> last_log_ns_{0};
  std::atomic<bool> stopped_{false};
  // deliver() was called since the thread last looked; the thread is in a
  // long (idle) wait.
  std::atomic<bool> traffic_{false};
  std::atomic<bool> idle_wait_{false};
  std::jthread thread_;
};

}  // namespace rstorm::worker_process
