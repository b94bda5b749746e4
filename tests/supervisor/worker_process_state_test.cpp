// A cluster's worker keeps its tasks' keyed state in RocksDB under its own
// folder by default (`<worker dir>/state/task-<id>`), where it stays after the
// worker stops: WorkerProcess in-process, on a topology library built as
// users build theirs.
#include <gtest/gtest.h>
#include <spdlog/sinks/null_sink.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include "common/metrics/prometheus_server.hpp"
#include "rstorm/worker/state_backends.hpp"
#include "tests/common/poll.hpp"
#include "worker/process/worker_process.hpp"

namespace rstorm::worker_process {
namespace {

using rstorm::testing::eventually;

// The spec of a worker running the whole keyed_state topology on a free
// port, its folder under `root` (created). Components by id: count (tasks
// 1, 2), words (task 3); the acker after them.
WorkerSpec keyed_state_spec(const std::filesystem::path& root) {
  const int port = metrics::free_loopback_port();
  WorkerSpec spec;
  spec.topology_id = "kv-1";
  spec.topology_name = "keyed_state";
  spec.library = RSTORM_KEYED_STATE_LIB;
  spec.supervisor_id = "n";
  spec.host = "127.0.0.1";
  spec.port = port;
  spec.worker_dir = root / "workers" / ("kv-1-" + std::to_string(port));
  std::filesystem::create_directories(spec.worker_dir);
  spec.executors = {
      {"count", 1, 1, "n", port}, {"count", 2, 2, "n", port}, {"words", 3, 3, "n", port}};
  return spec;
}

TEST(WorkerProcessState, KeyedStateGoesToRocksDbUnderTheWorkersFolder) {
  std::string pattern = ::testing::TempDir() + "rstorm_worker_state_XXXXXX";
  ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
  const std::filesystem::path root = pattern;
  WorkerSpec spec = keyed_state_spec(root);
  spec.config.set("keyedstate.words", std::int64_t{1400}, "test");
  spec.config.set("topology.state.provider", nullptr, "conf/defaults.yaml");
  {
    auto logger =
        std::make_shared<spdlog::logger>("test", std::make_shared<spdlog::sinks::null_sink_mt>());
    auto worker = WorkerProcess::start(spec, logger);
    ASSERT_TRUE(worker) << worker.status().message();
    ASSERT_TRUE(eventually([&] {
      const TopologyStats stats = (*worker)->runtime().stats();  // words points into it
      const ComponentStats* words = stats.component("words");
      return words != nullptr && words->acked == 1400;
    }));
  }  // the worker stops; its stores close
  worker::RocksDbStateBackend stores(spec.worker_dir / "state");
  std::map<std::string, std::int64_t> counts;
  for (int task : {1, 2}) {
    ASSERT_TRUE(std::filesystem::is_directory(stores.task_dir(TaskId(task)))) << task;
    KeyValueState<std::string, std::int64_t> state(stores.open(TaskId(task), "count"), "counts");
    state.for_each([&](const std::string& w, std::int64_t n) { counts[w] += n; });
  }
  EXPECT_FALSE(std::filesystem::exists(stores.task_dir(TaskId(3))));  // the spout asked for none
  std::map<std::string, std::int64_t> expected;
  for (int i = 0; i < 7; ++i) expected["w" + std::to_string(i)] = 200;
  EXPECT_EQ(counts, expected);
  std::error_code ec;
  std::filesystem::remove_all(root, ec);
}

// A worker whose supervisor died and was not restarted stops once nimbus
// has moved its executors elsewhere (nimbus.supervisor.timeout.secs), rather
// than run them a second time.
TEST(WorkerProcessOrphan, AWorkerWhoseSupervisorIsGoneStopsAfterTheOrphanTimeout) {
  std::string pattern = ::testing::TempDir() + "rstorm_worker_orphan_XXXXXX";
  ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
  const std::filesystem::path root = pattern;
  WorkerSpec spec = keyed_state_spec(root);
  spec.config.set("topology.state.provider", nullptr, "conf/defaults.yaml");
  spec.heartbeat_interval_ms = 50;
  spec.orphan_timeout_ms = 200;
  // The supervisor: a process that has exited (a reaped child).
  const pid_t gone = ::fork();
  if (gone == 0) ::_exit(0);
  ASSERT_GT(gone, 0);
  ASSERT_EQ(::waitpid(gone, nullptr, 0), gone);
  ASSERT_TRUE(write_file_atomically(spec.supervisor_file(), std::to_string(gone) + " 12345\n"));
  auto logger =
      std::make_shared<spdlog::logger>("test", std::make_shared<spdlog::sinks::null_sink_mt>());
  auto worker = WorkerProcess::start(spec, logger);
  ASSERT_TRUE(worker) << worker.status().message();
  std::atomic<bool> stop{false};
  std::atomic<bool> ended{false};
  std::thread runner([&] {
    (*worker)->run(stop);
    ended = true;
  });
  const bool stopped_itself = eventually([&] { return ended.load(); });
  stop = true;
  runner.join();
  EXPECT_TRUE(stopped_itself);
  EXPECT_FALSE((*worker)->restart_needed());
  EXPECT_TRUE((*worker)->failure().empty());
  worker->reset();
  std::error_code ec;
  std::filesystem::remove_all(root, ec);
}

}  // namespace
}  // namespace rstorm::worker_process
