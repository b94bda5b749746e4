#include "common/metrics/prometheus_server.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "common/metrics/http_get.hpp"

namespace rstorm::metrics {
namespace {

std::string tail_of(const std::filesystem::path& log, std::size_t bytes = 2000) {
  std::ifstream in(log);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  return s.size() > bytes ? s.substr(s.size() - bytes) : s;
}

// The tls_config and basic_auth of a job, when the options ask for them.
void scrape_security(std::ostream& out, const PrometheusServerOptions& o) {
  if (!o.tls_ca_file.empty() || o.tls_insecure_skip_verify) {
    out << "    tls_config:\n";
    if (!o.tls_ca_file.empty()) out << "      ca_file: \"" << o.tls_ca_file << "\"\n";
    if (o.tls_insecure_skip_verify) out << "      insecure_skip_verify: true\n";
  }
  if (!o.basic_auth_user.empty()) {
    out << "    basic_auth:\n"
        << "      username: \"" << o.basic_auth_user << "\"\n"
        << "      password_file: \"" << o.basic_auth_password_file << "\"\n";
  }
}

void file_sd_job(std::ostream& out, const PrometheusServerOptions& o, const char* job,
                 const char* glob) {
  // The endpoints label their series themselves (topology, node, rack,
  // role) as the SD entries do: theirs are kept, not renamed exported_*.
  out << "  - job_name: " << job << "\n    honor_labels: true\n";
  scrape_security(out, o);
  out << "    file_sd_configs:\n"
      << "      - files: [\"" << o.sd_dir << "/" << glob << "\"]\n"
      << "        refresh_interval: 5s\n";
}

}  // namespace

int free_loopback_port() {
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor acceptor(
      io, {boost::asio::ip::make_address("127.0.0.1"), 0});
  return acceptor.local_endpoint().port();
}

std::string prometheus_config(const PrometheusServerOptions& o) {
  std::ostringstream out;
  const auto secs = std::to_string(o.scrape_interval.count()) + "s";
  out << "# Written by rstorm; see conf/prometheus/prometheus.yml.\n"
      << "global:\n  scrape_interval: " << secs << "\n  evaluation_interval: " << secs
      << "\nscrape_configs:\n";
  if (!o.sd_dir.empty()) {
    file_sd_job(out, o, "rstorm-nimbus", "nimbus-*.json");
    file_sd_job(out, o, "rstorm-supervisor", "supervisor-*.json");
    file_sd_job(out, o, "rstorm-worker", "workers-*.json");
  }
  if (!o.static_targets.empty()) {
    out << "  - job_name: rstorm-local\n    scheme: " << o.static_scheme << "\n";
    scrape_security(out, o);
    out << "    static_configs:\n      - targets: [";
    for (std::size_t i = 0; i < o.static_targets.size(); ++i) {
      out << (i ? ", " : "") << "\"" << o.static_targets[i] << "\"";
    }
    out << "]\n";
    if (!o.static_topology.empty()) {
      out << "        labels:\n          topology: \"" << o.static_topology << "\"\n";
    }
  }
  return out.str();
}

api::Result<std::unique_ptr<PrometheusServer>> PrometheusServer::start(
    PrometheusServerOptions options) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(options.work_dir / "data", ec);
  if (ec) {
    return api::Status::error("cannot create '" + options.work_dir.string() + "': " + ec.message());
  }
  if (options.port == 0) options.port = free_loopback_port();
  const fs::path config = options.work_dir / "prometheus.yml";
  const fs::path log = options.work_dir / "prometheus.log";
  {
    std::ofstream out(config);
    out << prometheus_config(options);
    if (!out) return api::Status::error("cannot write '" + config.string() + "'");
  }
  std::unique_ptr<PrometheusServer> server(new PrometheusServer(options));
  server->port_ = options.port;
  const std::string listen = options.host + ":" + std::to_string(options.port);
  std::vector<std::string> args = {options.binary,
                                   "--config.file=" + config.string(),
                                   "--storage.tsdb.path=" + (options.work_dir / "data").string(),
                                   "--web.listen-address=" + listen,
                                   "--web.enable-lifecycle"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return api::Status::error("cannot fork to start " + options.binary);
  if (pid == 0) {
    setpgid(0, 0);
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    execv(argv[0], argv.data());
    _exit(127);
  }
  server->pid_ = pid;
  const auto deadline = std::chrono::steady_clock::now() + options.start_timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      server->pid_ = -1;
      return api::Status::error(options.binary + " exited while starting on " + listen + ": " +
                                tail_of(log));
    }
    auto r = http_get(options.host, options.port, "/-/ready", std::chrono::milliseconds(1000));
    if (r.ok() && r->status == 200) return server;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  server->stop();
  return api::Status::error(options.binary + " did not become ready on " + listen + ": " +
                            tail_of(log));
}

void PrometheusServer::stop() {
  if (pid_ <= 0) return;
  kill(pid_, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  int status = 0;
  while (waitpid(pid_, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  pid_ = -1;
}

PrometheusServer::~PrometheusServer() { stop(); }

api::Result<std::string> PrometheusServer::query(const std::string& promql) const {
  auto r = http_get(options_.host, port_, "/api/v1/query?query=" + url_encode(promql));
  if (!r.ok()) return r.status();
  return std::move(r->body);
}

}  // namespace rstorm::metrics
