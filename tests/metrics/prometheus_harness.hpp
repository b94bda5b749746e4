// A real Prometheus server for tests (metrics::PrometheusServer in a temp
// dir, stopped by pid) and bounded polling of its HTTP API.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <thread>

#include <nlohmann/json.hpp>

#include "common/metrics/prometheus_server.hpp"

namespace rstorm::metrics::testing {

inline std::filesystem::path temp_dir(const std::string& tag) {
  static int counter = 0;
  auto dir = std::filesystem::temp_directory_path() /
             ("rstorm-" + tag + "-" + std::to_string(::getpid()) + "-" + std::to_string(++counter));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// The parsed JSON answer of an instant query; nullopt if the query failed.
inline std::optional<nlohmann::json> instant_query(const PrometheusServer& p,
                                                   const std::string& promql) {
  auto body = p.query(promql);
  if (!body.ok()) return std::nullopt;
  auto json = nlohmann::json::parse(*body, nullptr, false);
  if (json.is_discarded()) return std::nullopt;
  return json;
}

// The value of a query that returns one sample, if it does.
inline std::optional<double> scalar_value(const PrometheusServer& p, const std::string& promql) {
  auto json = instant_query(p, promql);
  if (!json || (*json)["status"] != "success") return std::nullopt;
  const auto& result = (*json)["data"]["result"];
  if (!result.is_array() || result.size() != 1) return std::nullopt;
  return std::stod(result[0]["value"][1].get<std::string>());
}

// Polls `promql` until it returns one sample equal to `expected`, or the
// deadline; returns the last value seen.
inline std::optional<double> poll_until_equals(const PrometheusServer& p, const std::string& promql,
                                               double expected,
                                               std::chrono::seconds timeout = std::chrono::seconds(60)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::optional<double> last;
  while (std::chrono::steady_clock::now() < deadline) {
    last = scalar_value(p, promql);
    if (last && *last == expected) return last;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return last;
}

}  // namespace rstorm::metrics::testing
