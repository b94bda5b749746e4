#include "rstorm/worker/checkpoint_uploader.hpp"

#include <pthread.h>

#include "rstorm/worker/envelope.hpp"
#include "rstorm/worker/executor.hpp"

namespace rstorm::worker {

CheckpointUploader::CheckpointUploader(const ExecutorEnv& env)
    : env_(env),
      // Never waits on a destination: the coordinator's queue takes control
      // messages whatever its state, as the executors' transfers do.
      transfer_(&env.sinks, env.sinks.size(), &env.task_sink,
                std::vector<char>(env.sinks.size(), 1), 1, Transfer::Mode::kBlocking, &stats_,
                env.stopping) {}

CheckpointUploader::~CheckpointUploader() { stop(); }

void CheckpointUploader::start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "rs:checkpoints");
    run();
  });
}

void CheckpointUploader::submit(Part part) {
  {
    std::lock_guard lock(mutex_);
    if (stop_) return;
    queue_.push_back(std::move(part));
  }
  wake_.notify_one();
}

void CheckpointUploader::stop() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
    queue_.clear();
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void CheckpointUploader::run() {
  for (;;) {
    Part part;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      part = std::move(queue_.front());
      queue_.pop_front();
    }
    const std::uint64_t bytes = part.owner->store_part(part.task, part.checkpoint, part.state);
    transfer_.append(env_.plan->checkpoint_coordinator)
        .set_control(MessageKind::kCheckpointDone, static_cast<std::uint64_t>(part.checkpoint),
                     bytes, part.task);
    transfer_.commit();
    transfer_.flush();
  }
}

}  // namespace rstorm::worker
