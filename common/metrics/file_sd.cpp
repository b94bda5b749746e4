#include "common/metrics/file_sd.hpp"

#include <filesystem>
#include <fstream>
#include <system_error>

#include <nlohmann/json.hpp>

namespace rstorm::metrics {

std::string render_file_sd(const std::vector<SdTarget>& targets) {
  nlohmann::json groups = nlohmann::json::array();
  for (const auto& t : targets) {
    nlohmann::json labels = nlohmann::json::object();
    for (const auto& [k, v] : t.labels) labels[k] = v;
    groups.push_back({{"targets", {t.target}}, {"labels", labels}});
  }
  return groups.dump(2) + "\n";
}

api::Status write_file_sd(const std::string& path, const std::vector<SdTarget>& targets) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path p(path);
  if (p.has_parent_path()) fs::create_directories(p.parent_path(), ec);
  if (ec) {
    return api::Status::error("cannot create the service discovery directory '" +
                              p.parent_path().string() + "': " + ec.message());
  }
  const fs::path tmp = p.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << render_file_sd(targets);
    out.flush();
    if (!out) return api::Status::error("cannot write service discovery file '" + tmp.string() + "'");
  }
  fs::rename(tmp, p, ec);
  if (ec) {
    return api::Status::error("cannot write service discovery file '" + path + "': " + ec.message());
  }
  return api::Status::ok();
}

void remove_file_sd(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove(path, ec);
}

}  // namespace rstorm::metrics
