// Reads Prometheus's text exposition format (what every rstorm process serves
// at /metrics) into samples, so that rstorm-ui can sum a topology's counters
// over its workers. Comments (# HELP, # TYPE) are skipped; a malformed line is
// skipped and counted, never fatal.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace rstorm::ui {

struct PromSample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;

  std::string label(const std::string& key) const {
    auto it = labels.find(key);
    return it == labels.end() ? std::string() : it->second;
  }
};

struct PromParse {
  std::vector<PromSample> samples;
  std::map<std::string, std::string> types;  // family -> "counter", "gauge", "histogram", ...
  int malformed_lines = 0;
};

PromParse parse_prometheus_text(std::string_view text);

}  // namespace rstorm::ui
