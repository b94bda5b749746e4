#include "common/metrics/process_metrics.hpp"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

namespace rstorm::metrics {

double process_cpu_seconds() {
  std::ifstream in("/proc/self/stat");
  std::string line;
  if (!std::getline(in, line)) return 0;
  // The command name (field 2) may hold spaces: fields are counted after ')'.
  const auto close = line.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(line.substr(close + 2));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; fields >> field; ++i) {
    if (i == 14) utime = std::stoull(field);
    if (i == 15) {
      stime = std::stoull(field);
      break;
    }
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

double process_resident_bytes() {
  std::ifstream in("/proc/self/statm");
  unsigned long long size = 0, resident = 0;
  if (!(in >> size >> resident)) return 0;
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE));
}

CollectorHandle add_process_metrics(Registry& registry, Labels labels) {
  return CollectorHandle(registry, [labels = std::move(labels)](Snapshot& s) {
    s.counter("rstorm_process_cpu_seconds_total", "CPU time of this process, user and system",
              labels, process_cpu_seconds());
    s.gauge("rstorm_process_resident_memory_bytes", "Resident memory of this process", labels,
            process_resident_bytes());
  });
}

}  // namespace rstorm::metrics
