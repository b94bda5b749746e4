// Reading the Prometheus text format in tests: the value of series by name and labels.
#pragma once

#include <map>
#include <sstream>
#include <string>

namespace rstorm::metrics::testing {

// name -> labels text ("{a=\"b\",...}" or "") -> value.
inline std::multimap<std::string, std::pair<std::string, double>> parse_exposition(
    const std::string& text) {
  std::multimap<std::string, std::pair<std::string, double>> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto brace = line.find('{');
    const auto space = line.rfind(' ');
    std::string name, labels;
    if (brace != std::string::npos && brace < space) {
      name = line.substr(0, brace);
      labels = line.substr(brace, line.rfind('}') - brace + 1);
    } else {
      name = line.substr(0, space);
    }
    out.emplace(name, std::make_pair(labels, std::stod(line.substr(space + 1))));
  }
  return out;
}

// Sum of the series `name` whose labels contain every `key="value"` in `match`.
inline double sum_series(const std::string& text, const std::string& name,
                         const std::map<std::string, std::string>& match = {}) {
  double sum = 0;
  for (const auto& [n, series] : parse_exposition(text)) {
    if (n != name) continue;
    bool ok = true;
    for (const auto& [k, v] : match) {
      if (series.first.find(k + "=\"" + v + "\"") == std::string::npos) ok = false;
    }
    if (ok) sum += series.second;
  }
  return sum;
}

inline std::size_t count_series(const std::string& text, const std::string& name) {
  return parse_exposition(text).count(name);
}

}  // namespace rstorm::metrics::testing
