#include "common/metrics/security_config.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace rstorm::metrics {
namespace {

constexpr std::string_view kCert = "storm.metrics.tls.cert.path";
constexpr std::string_view kKey = "storm.metrics.tls.key.path";
constexpr std::string_view kCa = "storm.metrics.tls.ca.path";
constexpr std::string_view kUser = "storm.metrics.auth.user";
constexpr std::string_view kPasswordFile = "storm.metrics.auth.password.file";

// The string value of `key`; empty when it is absent, null or "".
std::string optional_string(const Config& config, std::string_view key) {
  const Config::Entry* entry = config.find(key);
  if (entry == nullptr || entry->value.is_null()) return {};
  return config.get_string(key);
}

// `key`'s path, which must name a readable file; empty when not set.
std::string readable_file(const Config& config, std::string_view key) {
  std::string path = optional_string(config, key);
  if (path.empty()) return path;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec) || !std::ifstream(path)) {
    throw ConfigError(std::string(key) + ": '" + path + "' (" + config.find(key)->origin +
                      ") is not a readable file");
  }
  return path;
}

void require_pair(const Config& config, std::string_view a, std::string_view b,
                  const std::string& what) {
  const bool has_a = !optional_string(config, a).empty();
  const bool has_b = !optional_string(config, b).empty();
  if (has_a == has_b) return;
  throw ConfigError(std::string(has_a ? b : a) + " is not set; " + what + " needs " +
                    std::string(a) + " and " + std::string(b) + " together");
}

struct Credentials {
  std::string user;
  std::string password;
};

Credentials credentials_from_config(const Config& config) {
  require_pair(config, kUser, kPasswordFile, "basic authentication of /metrics");
  Credentials c;
  c.user = optional_string(config, kUser);
  if (c.user.empty()) return c;
  if (c.user.find(':') != std::string::npos) {
    throw ConfigError(std::string(kUser) + ": '" + c.user +
                      "' has a ':', which basic authentication does not allow in a user");
  }
  const std::string file = readable_file(config, kPasswordFile);
  std::ifstream in(file);
  std::ostringstream text;
  text << in.rdbuf();
  c.password = text.str();
  const auto first = c.password.find_first_not_of(" \t\r\n");
  c.password = first == std::string::npos
                   ? std::string()
                   : c.password.substr(first, c.password.find_last_not_of(" \t\r\n") - first + 1);
  if (c.password.empty()) {
    throw ConfigError(std::string(kPasswordFile) + ": '" + file + "' holds no password");
  }
  return c;
}

}  // namespace

ServerSecurity server_security_from_config(const Config& config) {
  require_pair(config, kCert, kKey, "TLS on /metrics");
  ServerSecurity s;
  s.tls_cert_path = readable_file(config, kCert);
  s.tls_key_path = readable_file(config, kKey);
  auto [user, password] = credentials_from_config(config);
  s.auth_user = std::move(user);
  s.auth_password = std::move(password);
  return s;
}

HttpClientOptions scrape_client_from_config(const Config& config) {
  require_pair(config, kCert, kKey, "TLS on /metrics");
  HttpClientOptions o;
  o.https = !optional_string(config, kCert).empty();
  o.ca_file = readable_file(config, kCa);
  auto [user, password] = credentials_from_config(config);
  o.user = std::move(user);
  o.password = std::move(password);
  return o;
}

}  // namespace rstorm::metrics
