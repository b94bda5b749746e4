// Helpers shared by the end-to-end cluster tests: run the real `rstorm` binary
// (next to the daemons in build/bin) and capture its exit code and output, and
// the short timeouts that make failures show within seconds.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>
#include <vector>

#include "supervisor/supervisor_options.hpp"

namespace rstorm::testing {

struct CliResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

inline std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

inline CliResult run_cli(const std::vector<std::string>& args) {
  std::string command = shell_quote((supervisor::executable_dir() / "rstorm").string());
  for (const auto& a : args) command += " " + shell_quote(a);
  command += " 2>&1";
  CliResult result;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  std::size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) result.output.append(buffer, n);
  const int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

// Short timeouts so that failures are detected within seconds.
inline const std::vector<std::string> kFastConfig = {
    "nimbus.supervisor.timeout.secs=6",    "nimbus.task.timeout.secs=6",
    "nimbus.monitor.freq.secs=1",          "nimbus.task.launch.secs=20",
    "supervisor.worker.timeout.secs=4",    "supervisor.heartbeat.frequency.secs=1",
    "supervisor.monitor.frequency.secs=1", "supervisor.memory.capacity.mb=4096",
    "supervisor.cpu.capacity=400",         "storm.zookeeper.session.timeout=6000",
    "storm.zookeeper.retry.interval=200",  "storm.zookeeper.retry.intervalceiling.millis=1000"};

}  // namespace rstorm::testing
