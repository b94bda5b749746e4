#include "supervisor/dev_cluster.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <thread>

#include "common/cluster_paths.hpp"
#include "common/config_loader.hpp"
#include "common/security/certificates.hpp"
#include "common/security/secrets.hpp"
#include "common/zookeeper_store.hpp"
#include "supervisor/supervisor_options.hpp"
#include "worker/process/worker_spec.hpp"

namespace rstorm::supervisor {
namespace {

using Clock = std::chrono::steady_clock;

int connect_loopback(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

std::string join(const std::vector<int>& ports) {
  std::string out;
  for (int p : ports) out += (out.empty() ? "" : ",") + std::to_string(p);
  return out;
}

}  // namespace

namespace {

// Whether 127.0.0.1:port can be bound now (0: any; then `port` is set to the
// one the system chose). `as_listener`: by a listener that reuses addresses,
// as every daemon's does, which may bind while connections of an earlier
// listener on the port linger in TIME_WAIT.
bool bindable(int& port, bool as_listener = false) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  if (as_listener) {
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
                  (!as_listener || ::listen(fd, 1) == 0) &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  if (ok) port = ntohs(addr.sin_port);
  ::close(fd);
  return ok;
}

bool listenable(int port) { return bindable(port, true); }

// The first port of the system's ephemeral range (net.ipv4.ip_local_port_range).
int first_ephemeral_port() {
  std::ifstream in("/proc/sys/net/ipv4/ip_local_port_range");
  int low = 32768;
  in >> low;
  return in ? low : 32768;
}

}  // namespace

namespace {

// The port claims this process made, given up when it exits normally (one
// left by a crash is stale, and taken over by the next claimer).
class PortClaims {
 public:
  PortClaims() : dir_(std::filesystem::temp_directory_path() / "rstorm-port-claims") {
    std::error_code ec;
    std::filesystem::create_directories(dir_, ec);
    std::filesystem::permissions(
        dir_, std::filesystem::perms::all | std::filesystem::perms::sticky_bit, ec);
  }
  ~PortClaims() {
    std::lock_guard lock(mutex_);
    // Only our own: a child forked without exec shares this list, not the claims.
    for (int port : ports_) {
      if (holder(port) == ::getpid()) ::unlink(file(port).c_str());
    }
  }

  bool claim(int port) {
    const std::string pid = std::to_string(::getpid());
    // Written whole under a name of our own, then linked to the port's name:
    // a claim is never seen half written.
    const std::string mine = (dir_ / ("." + pid + "-" + std::to_string(port))).string();
    {
      std::ofstream out(mine, std::ios::trunc);
      out << pid;
      if (!out.flush()) return true;  // no claims here (read-only, another user's folder)
    }
    bool claimed = false;
    for (int attempt = 0; attempt < 2 && !claimed; ++attempt) {
      if (::link(mine.c_str(), file(port).c_str()) == 0) {
        std::lock_guard lock(mutex_);
        ports_.push_back(port);
        claimed = true;
        break;
      }
      if (errno != EEXIST) {
        claimed = true;  // no links here: no claims either
        break;
      }
      const long held_by = holder(port);
      if (held_by > 0 && (::kill(static_cast<pid_t>(held_by), 0) == 0 || errno == EPERM)) {
        break;  // another live process's (or an earlier claim of ours)
      }
      ::unlink(file(port).c_str());  // stale: its process is gone
    }
    ::unlink(mine.c_str());
    return claimed;
  }

  void release(int port) {
    std::lock_guard lock(mutex_);
    if (holder(port) == ::getpid()) ::unlink(file(port).c_str());
    std::erase(ports_, port);
  }

 private:
  std::string file(int port) const { return (dir_ / std::to_string(port)).string(); }
  long holder(int port) const {
    std::ifstream in(file(port));
    long pid = 0;
    return in >> pid ? pid : 0;
  }

  const std::filesystem::path dir_;
  std::mutex mutex_;
  std::vector<int> ports_;
};

}  // namespace

static PortClaims& port_claims() {
  static PortClaims claims;
  return claims;
}

bool claim_loopback_port(int port) { return port_claims().claim(port); }

void release_loopback_port(int port) { port_claims().release(port); }

Result<int> free_loopback_port() {
  // Below the ephemeral range: a port the system chose for us (bind to 0) is
  // free again once we close it, and any process's next outgoing connection
  // may take it as its local port before our daemon binds it. Out of that
  // range only another explicit bind can, so pick at random there.
  static constexpr int kLowest = 10000;
  const int highest = first_ephemeral_port() - 1;
  if (highest > kLowest + 1000) {
    thread_local std::mt19937 random(std::random_device{}() ^ static_cast<unsigned>(::getpid()));
    std::uniform_int_distribution<int> pick(kLowest, highest);
    for (int attempt = 0; attempt < 64; ++attempt) {
      int port = pick(random);
      if (bindable(port) && claim_loopback_port(port)) return port;
    }
  }
  int port = 0;
  if (!bindable(port)) return Status(ErrorCode::kIoError, "cannot bind a free port on 127.0.0.1");
  return port;
}

bool loopback_port_open(int port) {
  const int fd = connect_loopback(port);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

std::optional<std::string> loopback_exchange(int port, std::string_view bytes,
                                             std::chrono::seconds read_timeout) {
  const int fd = connect_loopback(port);
  if (fd < 0) return std::nullopt;
  timeval timeout{static_cast<time_t>(read_timeout.count()), 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;  // the peer closed on what it had read
    sent += static_cast<std::size_t>(n);
  }
  ::shutdown(fd, SHUT_WR);
  std::string answer;
  char buffer[4096];
  ssize_t n;
  while ((n = ::recv(fd, buffer, sizeof buffer, 0)) > 0) answer.append(buffer, static_cast<std::size_t>(n));
  ::close(fd);
  return answer;
}

std::string zookeeper_four_letter(int port, const std::string& word) {
  return loopback_exchange(port, word, std::chrono::seconds(2)).value_or("");
}

DevCluster::DevCluster(DevClusterOptions options, Logger logger)
    : options_(std::move(options)), logger_(std::move(logger)) {}

DevCluster::~DevCluster() { stop(); }

Result<std::unique_ptr<DevCluster>> DevCluster::start(DevClusterOptions options, Logger logger) {
  if (options.supervisors < 1 || options.racks < 1 || options.slots < 1 || options.nimbuses < 1) {
    return Status(ErrorCode::kInvalidArgument,
                  "--supervisors, --racks, --slots and --nimbuses must be at least 1");
  }
  if (options.bin_dir.empty()) options.bin_dir = executable_dir();
  for (const char* binary : {"rstorm-nimbus", "rstorm-supervisor", "rstorm-worker"}) {
    if (!std::filesystem::exists(options.bin_dir / binary)) {
      return Status(ErrorCode::kNotFound, std::string(binary) + " is not in " +
                                              options.bin_dir.string() + ": build it first");
    }
  }
  std::unique_ptr<DevCluster> cluster(new DevCluster(std::move(options), std::move(logger)));
  if (Status s = cluster->start_all(); !s) {
    cluster->stop();
    return s;
  }
  return cluster;
}

Status DevCluster::launch(DevProcess& p) {
  auto id = launch_process(p.binary, p.args, p.log);
  if (!id) return id.status();
  p.process = *id;
  return Status::ok();
}

std::string DevCluster::tail_of(const std::filesystem::path& log) const {
  auto text = worker_process::read_whole_file(log);
  if (!text) return "(no log)";
  return text->size() > 1500 ? text->substr(text->size() - 1500) : *text;
}

Status DevCluster::wait_until(const DevProcess& p, const std::function<bool()>& ready,
                              const std::string& what) {
  const auto deadline = Clock::now() + options_.start_timeout;
  while (!ready()) {
    if (!process_alive(p.process)) {
      return Status(ErrorCode::kUnavailable, p.name + " exited before " + what + "; its log (" +
                                                 p.log.string() + ") ends with:\n" + tail_of(p.log));
    }
    if (Clock::now() > deadline) {
      return Status(ErrorCode::kTimeout, p.name + " did not " + what + " within " +
                                             std::to_string(options_.start_timeout.count()) +
                                             " ms; its log (" + p.log.string() + ") ends with:\n" +
                                             tail_of(p.log));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return Status::ok();
}

Status DevCluster::start_zookeeper() {
  const auto dir = work_dir_ / "zookeeper";
  std::filesystem::create_directories(dir / "data");
  auto port = port_for("zookeeper");
  if (!port) return port.status();
  zookeeper_port_ = *port;
  std::ofstream cfg(dir / "zoo.cfg");
  cfg << "tickTime=2000\ndataDir=" << (dir / "data").string() << "\nclientPort=" << *port
      << "\nclientPortAddress=127.0.0.1\nadmin.enableServer=false\n"
         "4lw.commands.whitelist=ruok,srvr\n";
  cfg.close();
  zookeeper_ = std::make_unique<DevProcess>();
  zookeeper_->name = "zookeeper";
  zookeeper_->binary = options_.java;
  zookeeper_->log = dir / "zookeeper.log";
  zookeeper_->args = {"-Xms16m", "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                      "-Djava.net.preferIPv4Stack=true", "-cp", options_.zookeeper_classpath,
                      "org.apache.zookeeper.server.ZooKeeperServerMain", (dir / "zoo.cfg").string()};
  if (Status s = launch(*zookeeper_); !s) return s;
  zookeeper_connect_ = "127.0.0.1:" + std::to_string(*port);
  return wait_until(*zookeeper_, [&] { return zookeeper_four_letter(*port, "ruok") == "imok"; },
                    "answer ruok");
}

Result<int> DevCluster::port_for(const std::string& name, int companion_offset) {
  const auto file = work_dir_ / "ports.json";
  if (!ports_loaded_) {
    ports_loaded_ = true;
    if (auto text = worker_process::read_whole_file(file)) {
      const auto json = nlohmann::json::parse(*text, nullptr, false);
      if (json.is_object()) {
        for (const auto& [key, value] : json.items()) {
          if (value.is_number_integer()) remembered_ports_[key] = value.get<int>();
        }
      }
    }
  }
  // `port`, already claimed, with its companion free and claimed too (or
  // none asked); otherwise `port` is given up.
  auto with_companion = [&](int port) {
    if (companion_offset <= 0) return true;
    const int companion = port + companion_offset;
    if (companion < 65536 && listenable(companion) && claim_loopback_port(companion)) return true;
    release_loopback_port(port);
    return false;
  };
  // A work dir used before gets the ports it had, while they are free: the
  // cluster comes back where clients and assignments knew it.
  int port = 0;
  if (auto it = remembered_ports_.find(name);
      it != remembered_ports_.end() && it->second > 0 && it->second < 65536 &&
      listenable(it->second) && claim_loopback_port(it->second) && with_companion(it->second)) {
    port = it->second;
  }
  for (int attempt = 0; port == 0; ++attempt) {
    auto fresh = free_loopback_port();
    if (!fresh) return fresh.status();
    if (with_companion(*fresh)) {
      port = *fresh;
    } else if (attempt == 64) {
      return Status(ErrorCode::kIoError, "cannot find a free port on 127.0.0.1 whose port + " +
                                             std::to_string(companion_offset) + " is free too");
    }
  }
  remembered_ports_[name] = port;
  claimed_ports_.push_back(port);
  if (companion_offset > 0) claimed_ports_.push_back(port + companion_offset);
  std::ofstream(file) << nlohmann::json(remembered_ports_).dump(2) << "\n";
  return port;
}

Config DevCluster::overrides_config() const {
  ConfigLoadOptions lo;
  lo.overrides = options_.overrides;
  lo.search = false;
  auto config = load_config(lo);
  return config ? std::move(config).value() : Config();
}

int DevCluster::worker_metrics_offset() const {
  return static_cast<int>(overrides_config().get_int("worker.metrics.port.offset", 1000));
}

void DevCluster::divide_machine() {
  // The supervisors share this machine: each offers its share of the
  // memory and CPU, so that what the scheduler places on them all fits the
  // machine, as on a cluster of machines (each offering the whole machine
  // promised N times its memory). What the overrides set stands.
  const Config overrides = overrides_config();
  const double n = std::max(1, options_.supervisors);
  if (const double mb = machine_memory_mb();
      mb > 0 && !set_by_user(overrides, "supervisor.memory.capacity.mb")) {
    share_memory_mb_ = static_cast<std::int64_t>(mb / n);
  }
  if (!set_by_user(overrides, "supervisor.cpu.capacity")) {
    share_cpu_ = static_cast<std::int64_t>(machine_cpu_points() / n);
  }
}

Status DevCluster::start_all() {
  if (options_.work_dir.empty()) {
    char pattern[] = "/tmp/rstorm-dev-XXXXXX";
    if (::mkdtemp(pattern) == nullptr) return Status(ErrorCode::kIoError, "mkdtemp failed");
    work_dir_ = pattern;
    own_work_dir_ = !options_.keep_work_dir;
  } else {
    work_dir_ = std::filesystem::absolute(options_.work_dir);
    std::filesystem::create_directories(work_dir_);
    // A secure cluster's ZooKeeper nodes carry ACLs for its daemons' digest,
    // which a plain one does not have: its nimbus could not register.
    std::error_code ec;
    if (!options_.secure && std::filesystem::exists(work_dir_ / "daemon.yaml", ec)) {
      return Status(ErrorCode::kInvalidArgument,
                    "work dir " + work_dir_.string() +
                        " was made by a secure dev cluster (--secure): its ZooKeeper nodes "
                        "carry that cluster's ACLs, which a plain cluster cannot pass; start it "
                        "with --secure again, or give a new --work-dir");
    }
  }
  if (options_.zookeeper_connect.empty()) {
    if (Status s = start_zookeeper(); !s) return s;
  } else {
    zookeeper_connect_ = options_.zookeeper_connect;
    zookeeper_port_ = std::stoi(zookeeper_connect_.substr(zookeeper_connect_.rfind(':') + 1));
  }
  for (int i = 0; i < options_.nimbuses; ++i) {
    auto port = port_for("nimbus-" + std::to_string(i + 1));
    if (!port) return port.status();
    nimbus_ports_.push_back(*port);
  }
  if (options_.secure) {
    if (Status s = make_certificates(); !s) return s;
  }
  std::string base_yaml;
  {
    std::ostringstream yaml;
    yaml << "# rstorm dev-cluster: client config\n"
         << "storm.zookeeper.servers: [\"127.0.0.1\"]\n"
         << "storm.zookeeper.port: " << zookeeper_port_ << "\n"
         << "# loopback: a dead nimbus's session expires in 8 s, not 20 s, so a standby\n"
         << "# leads within about 10 s (a dead supervisor's executors move after\n"
         << "# nimbus.supervisor.timeout.secs, once its workers have stopped)\n"
         << "storm.zookeeper.session.timeout: 8000\n"
         << "# every nimbus, so the client finds the leader after a failover\n"
         << "nimbus.seeds: " << nimbus_seeds() << "\n"
         << "nimbus.thrift.port: " << nimbus_ports_.front() << "\n"
         << "# Prometheus file service discovery, written by nimbus and supervisors\n"
         << "storm.metrics.sd.dir: \"" << metrics_sd_dir().string() << "\"\n"
         << "# checkpoints (topology.state.checkpointing): a folder every supervisor reaches\n"
         << "topology.state.checkpoint.dir: \"" << (work_dir_ / "checkpoints").string() << "\"\n";
    if (options_.secure) {
      const auto tls = tls_dir().string();
      yaml << "# secure mode: nimbus serves only mutual TLS on these ports, and checks every\n"
           << "# call against the ACL keys; certificates and keys in " << tls << "\n"
           << "nimbus.thrift.tls.port: " << nimbus_ports_.front() << "\n"
           << "nimbus.authorizer: \"simple-acl\"\n"
           << "nimbus.admins: [\"admin\"]\n"
           << "nimbus.supervisor.users: [\"supervisor\"]\n"
           << "nimbus.daemon.users: [\"nimbus\", \"ui\"]\n"
           << "# rstorm-ui makes its calls for the user of the browser's certificate\n"
           << "nimbus.impersonation.acl: [\"ui: users=*; hosts=127.0.0.1\"]\n"
           << "# workers prove they hold their topology's secret before a tuple is read\n"
           << "storm.messaging.netty.authentication: true\n";
    }
    base_yaml = yaml.str();
  }
  {
    std::ofstream yaml(client_config());
    yaml << base_yaml << (options_.secure ? tls_client_yaml("alice") : std::string());
  }
  if (options_.secure) {
    for (const char* user : {"bob", "admin"}) {
      std::ofstream yaml(user_config(user));
      yaml << base_yaml << tls_client_yaml(user);
    }
    // The daemons' own config: also the ZooKeeper digest, which users never
    // see. A work dir used before keeps its digest: the nodes in its
    // ZooKeeper data carry ACLs for it.
    zookeeper_auth_payload_.clear();
    if (std::filesystem::exists(daemon_config())) {
      ConfigLoadOptions lo;
      lo.config_file = daemon_config();
      lo.search = false;
      if (auto before = load_config(lo); before && before->find("storm.zookeeper.auth.payload")) {
        zookeeper_auth_payload_ = before->get_string("storm.zookeeper.auth.payload");
      }
    }
    if (zookeeper_auth_payload_.empty()) {
      zookeeper_auth_payload_ = "rstorm:" + security::to_hex(security::random_bytes(16));
    }
    std::ofstream yaml(daemon_config());
    std::error_code ec;
    std::filesystem::permissions(
        daemon_config(), std::filesystem::perms::owner_read | std::filesystem::perms::owner_write,
        ec);
    yaml << base_yaml << "# the daemons' ZooKeeper digest: their nodes are closed to others\n"
         << "storm.zookeeper.auth.scheme: \"digest\"\n"
         << "storm.zookeeper.auth.payload: \"" << zookeeper_auth_payload_ << "\"\n";
  }
  auto daemon_args = [&](const std::filesystem::path& local_dir) {
    std::vector<std::string> args{"--config", daemon_config().string(), "-c",
                                  "storm.local.dir=" + local_dir.string()};
    if (options_.secure) {
      // Every /metrics (nimbus, supervisors, their workers, rstorm-ui reads
      // them) over HTTPS with basic authentication; Prometheus below scrapes so.
      const auto tls = tls_dir();
      for (const std::string& kv :
           {"storm.metrics.tls.cert.path=" + (tls / "metrics.pem").string(),
            "storm.metrics.tls.key.path=" + (tls / "metrics-key.pem").string(),
            "storm.metrics.tls.ca.path=" + (tls / "ca.pem").string(),
            std::string("storm.metrics.auth.user=prometheus"),
            "storm.metrics.auth.password.file=" + metrics_password_file().string(),
            // rstorm-ui and the log viewers: HTTPS, only for holders of a
            // certificate of the CA (users import <user>.p12 into a browser).
            "ui.https.cert.path=" + (tls / "ui.pem").string(),
            "ui.https.key.path=" + (tls / "ui-key.pem").string(),
            "ui.https.ca.path=" + (tls / "ca.pem").string(),
            std::string("ui.https.need.client.auth=true"),
            "logviewer.https.cert.path=" + (tls / "supervisor.pem").string(),
            "logviewer.https.key.path=" + (tls / "supervisor-key.pem").string(),
            "logviewer.https.ca.path=" + (tls / "ca.pem").string(),
            std::string("logviewer.https.need.client.auth=true")}) {
        args.push_back("-c");
        args.push_back(kv);
      }
    }
    for (const auto& o : options_.overrides) {
      args.push_back("-c");
      args.push_back(o);
    }
    return args;
  };
  for (int i = 0; i < options_.nimbuses; ++i) {
    DevProcess p;
    p.name = "nimbus-" + std::to_string(i + 1);
    p.binary = options_.bin_dir / "rstorm-nimbus";
    const auto dir = work_dir_ / p.name;
    std::filesystem::create_directories(dir);
    p.log = dir / "nimbus.log";
    p.args = daemon_args(dir / "local");
    auto metrics_port = port_for(p.name + " metrics");
    if (!metrics_port) return metrics_port.status();
    nimbus_metrics_ports_.push_back(*metrics_port);
    p.args.insert(p.args.end(), {"-c", "nimbus.metrics.port=" + std::to_string(*metrics_port)});
    const std::string port = std::to_string(nimbus_ports_[static_cast<std::size_t>(i)]);
    p.args.insert(p.args.end(), {"-c", "nimbus.thrift.port=" + port});
    if (options_.secure) {
      const auto tls = tls_dir();
      p.args.insert(p.args.end(),
                    {"-c", "nimbus.thrift.tls.port=" + port, "-c",
                     "nimbus.thrift.tls.server.cert.path=" + (tls / "nimbus.pem").string(), "-c",
                     "nimbus.thrift.tls.server.key.path=" + (tls / "nimbus-key.pem").string(), "-c",
                     "nimbus.thrift.tls.server.ca.path=" + (tls / "ca.pem").string()});
      const auto client = tls_client_overrides("nimbus");
      p.args.insert(p.args.end(), client.begin(), client.end());
    }
    // Every nimbus holds a topology's code before it runs, so any of them can
    // take over (an explicit override from the caller still wins).
    if (options_.nimbuses > 1) {
      p.args.insert(p.args.end() - 2,
                    {"-c", "topology.min.replication.count=" + std::to_string(options_.nimbuses)});
    }
    if (Status s = launch(p); !s) return s;
    nimbuses_.push_back(std::move(p));
  }
  for (int i = 0; i < options_.nimbuses; ++i) {
    const int port = nimbus_ports_[static_cast<std::size_t>(i)];
    if (Status s = wait_until(nimbuses_[static_cast<std::size_t>(i)],
                              [&] { return loopback_port_open(port); }, "listen");
        !s) {
      return s;
    }
  }
  divide_machine();
  for (int i = 0; i < options_.supervisors; ++i) {
    std::vector<int> ports;
    for (int k = 0; k < options_.slots; ++k) {
      // A worker's /metrics listens at its slot + worker.metrics.port.offset:
      // that port is kept free as well.
      auto port =
          port_for(supervisor_id(i) + " slot " + std::to_string(k + 1), worker_metrics_offset());
      if (!port) return port.status();
      ports.push_back(*port);
    }
    supervisor_ports_.push_back(ports);
    DevProcess p;
    p.name = supervisor_id(i);
    p.binary = options_.bin_dir / "rstorm-supervisor";
    const auto dir = supervisor_dir(i);
    std::filesystem::create_directories(dir);
    p.log = dir / "supervisor.log";
    p.args = daemon_args(dir);
    auto metrics_port = port_for(p.name + " metrics");
    if (!metrics_port) return metrics_port.status();
    p.args.insert(p.args.end(), {"-c", "supervisor.metrics.port=" + std::to_string(*metrics_port)});
    supervisor_metrics_ports_.push_back(*metrics_port);
    auto logviewer_port = port_for(p.name + " logviewer");
    if (!logviewer_port) return logviewer_port.status();
    p.args.insert(p.args.end(), {"-c", "logviewer.port=" + std::to_string(*logviewer_port)});
    logviewer_ports_.push_back(*logviewer_port);
    p.args.insert(p.args.end(),
                  {"-c", "supervisor.id=" + p.name, "-c",
                   "supervisor.rack=r" + std::to_string(i % options_.racks + 1), "-c",
                   "supervisor.slots.ports=[" + join(ports) + "]"});
    if (share_memory_mb_ > 0) {
      p.args.insert(p.args.end(),
                    {"-c", "supervisor.memory.capacity.mb=" + std::to_string(share_memory_mb_)});
    }
    if (share_cpu_ > 0) {
      p.args.insert(p.args.end(), {"-c", "supervisor.cpu.capacity=" + std::to_string(share_cpu_)});
    }
    if (options_.secure) {
      const auto client = tls_client_overrides("supervisor");
      p.args.insert(p.args.end(), client.begin(), client.end());
      // Its workers encrypt their connections, presenting its certificate.
      const auto tls = tls_dir();
      p.args.insert(
          p.args.end(),
          {"-c", "storm.messaging.netty.tls.enable=true", "-c",
           "storm.messaging.netty.tls.cert.path=" + (tls / "supervisor.pem").string(), "-c",
           "storm.messaging.netty.tls.key.path=" + (tls / "supervisor-key.pem").string(), "-c",
           "storm.messaging.netty.tls.ca.path=" + (tls / "ca.pem").string()});
    }
    if (Status s = launch(p); !s) return s;
    supervisors_.push_back(std::move(p));
  }
  ZooKeeperOptions zk;
  zk.servers = zookeeper_connect_;
  zk.connection_timeout = options_.start_timeout;
  auto store = ZooKeeperStore::connect(zk, logger_.with_context("zk", "dev-cluster"));
  if (!store) return store.status();
  const ClusterPaths paths;
  for (int i = 0; i < options_.supervisors; ++i) {
    const std::string path = paths.supervisor(supervisor_id(i));
    if (Status s = wait_until(supervisors_[static_cast<std::size_t>(i)],
                              [&] {
                                auto found = (*store)->exists(path);
                                return found && *found;
                              },
                              "register in ZooKeeper");
        !s) {
      return s;
    }
  }
  if (options_.ui) {
    auto port = port_for("ui");
    if (!port) return port.status();
    ui_port_ = *port;
    DevProcess p;
    p.name = "ui";
    p.binary = options_.bin_dir / "rstorm-ui";
    const auto dir = work_dir_ / "ui";
    std::filesystem::create_directories(dir);
    p.log = dir / "ui.log";
    p.args = daemon_args(dir);
    p.args.insert(p.args.end(), {"-c", "ui.port=" + std::to_string(ui_port_)});
    if (options_.secure) {
      const auto client = tls_client_overrides("ui");
      p.args.insert(p.args.end(), client.begin(), client.end());
    }
    if (Status s = launch(p); !s) return s;
    ui_ = std::make_unique<DevProcess>(std::move(p));
    if (Status s = wait_until(*ui_, [&] { return loopback_port_open(ui_port_); }, "listen"); !s) {
      return s;
    }
  }
  if (options_.prometheus) {
    metrics::PrometheusServerOptions po;
    po.work_dir = work_dir_ / "prometheus";
    po.sd_dir = metrics_sd_dir().string();
    po.scrape_interval = options_.prometheus_scrape_interval;
    if (options_.secure) {
      po.tls_ca_file = (tls_dir() / "ca.pem").string();
      po.basic_auth_user = "prometheus";
      po.basic_auth_password_file = metrics_password_file().string();
    }
    auto prometheus = metrics::PrometheusServer::start(po);
    if (!prometheus.ok()) return Status(ErrorCode::kIoError, prometheus.status().message());
    prometheus_ = std::move(prometheus).value();
  }
  return Status::ok();
}

void DevCluster::stop() {
  if (stopped_) return;
  stopped_ = true;
  if (prometheus_) prometheus_->stop();
  std::vector<ProcessId> ids;
  if (ui_) terminate_processes({ui_->process}, std::chrono::seconds(10));
  // Nimbus first: stopped after the supervisors, it would see every node
  // leave and mark each topology unschedulable on the way out.
  for (const auto& n : nimbuses_) ids.push_back(n.process);
  terminate_processes(ids, std::chrono::seconds(10));
  ids.clear();
  for (const auto& s : supervisors_) ids.push_back(s.process);
  terminate_processes(ids, std::chrono::seconds(20));  // they stop their workers first
  if (zookeeper_) terminate_processes({zookeeper_->process}, std::chrono::seconds(10));
  // Free again, for a cluster started in this work dir later by this process too.
  for (int port : claimed_ports_) release_loopback_port(port);
  if (own_work_dir_) {
    std::error_code ec;
    std::filesystem::remove_all(work_dir_, ec);
  }
}

std::string DevCluster::ui_url() const {
  if (!ui_) return {};
  return (options_.secure ? "https://127.0.0.1:" : "http://127.0.0.1:") + std::to_string(ui_port_);
}

std::string DevCluster::nimbus_seeds() const {
  std::string out;
  for (int port : nimbus_ports_) {
    out += (out.empty() ? "[" : ", ") + ("\"127.0.0.1:" + std::to_string(port) + "\"");
  }
  return out + "]";
}

std::vector<std::string> DevCluster::client_overrides(int index) const {
  std::vector<std::string> out = {"-c", "storm.zookeeper.servers=[\"127.0.0.1\"]",
                                  "-c", "storm.zookeeper.port=" + std::to_string(zookeeper_port_),
                                  "-c", "nimbus.seeds=[\"127.0.0.1\"]",
                                  "-c", "nimbus.thrift.port=" + std::to_string(nimbus_port(index))};
  if (options_.secure) {
    out.insert(out.end(), {"-c", "nimbus.thrift.tls.port=" + std::to_string(nimbus_port(index))});
    const auto client = tls_client_overrides("alice");
    out.insert(out.end(), client.begin(), client.end());
  }
  return out;
}

std::filesystem::path DevCluster::daemon_config() const {
  return options_.secure ? work_dir_ / "daemon.yaml" : client_config();
}

std::filesystem::path DevCluster::user_config(const std::string& user) const {
  return user == "alice" ? client_config() : work_dir_ / (user + ".yaml");
}

Status DevCluster::make_certificates() {
  auto ca = security::CertificateAuthority::create("rstorm dev-cluster CA", 30);
  if (!ca) return ca.status();
  const auto dir = tls_dir();
  if (Status s = (*ca)->write_certificate(dir / "ca.pem"); !s) return s;
  // nimbus answers on loopback; every name is also a client (a standby nimbus
  // reads code from the leader, supervisors heartbeat, rstorm-ui reads).
  for (const char* name : {"nimbus", "supervisor", "metrics", "ui", "alice", "bob", "admin"}) {
    security::CertificateRequest request;
    request.common_name = name;
    // Servers name the host they are dialled at: nimbus, the supervisors
    // (their workers and log viewers), the metrics endpoints and rstorm-ui.
    const std::string_view n(name);
    if (n == "nimbus" || n == "supervisor" || n == "metrics" || n == "ui") {
      request.dns_names = {"localhost"};
      request.ip_addresses = {"127.0.0.1"};
    }
    // Users also get a PKCS#12 bundle (password "rstorm") to import into a
    // browser for the UI and the log viewers.
    if (n == "alice" || n == "bob" || n == "admin") {
      request.pkcs12_path = dir / (std::string(name) + ".p12");
    }
    if (Status s = (*ca)->issue(request, dir / (std::string(name) + ".pem"),
                                dir / (std::string(name) + "-key.pem"));
        !s) {
      return s;
    }
  }
  // The metrics endpoints' basic-authentication password (Prometheus reads
  // the same file): readable by this user only.
  std::ofstream(metrics_password_file()).close();
  std::error_code ec;
  std::filesystem::permissions(
      metrics_password_file(),
      std::filesystem::perms::owner_read | std::filesystem::perms::owner_write, ec);
  std::ofstream password(metrics_password_file());
  password << security::to_hex(security::random_bytes(16)) << "\n";
  return password ? Status::ok()
                  : Status(ErrorCode::kIoError, "cannot write " + metrics_password_file().string());
}

std::string DevCluster::tls_client_yaml(const std::string& user) const {
  const auto dir = tls_dir();
  return "# this client is '" + user + "' (the CN of its certificate)\n" +
         "nimbus.thrift.client.use.tls: true\n" + "nimbus.thrift.tls.client.cert.path: \"" +
         (dir / (user + ".pem")).string() + "\"\n" + "nimbus.thrift.tls.client.key.path: \"" +
         (dir / (user + "-key.pem")).string() + "\"\n" + "nimbus.thrift.tls.client.ca.path: \"" +
         (dir / "ca.pem").string() + "\"\n" +
         "# the workers' /metrics (rstorm describe's counts): HTTPS with Prometheus's credentials\n" +
         "storm.metrics.tls.cert.path: \"" + (dir / "metrics.pem").string() + "\"\n" +
         "storm.metrics.tls.key.path: \"" + (dir / "metrics-key.pem").string() + "\"\n" +
         "storm.metrics.tls.ca.path: \"" + (dir / "ca.pem").string() + "\"\n" +
         "storm.metrics.auth.user: \"prometheus\"\n" + "storm.metrics.auth.password.file: \"" +
         metrics_password_file().string() + "\"\n";
}

std::vector<std::string> DevCluster::tls_client_overrides(const std::string& user) const {
  const auto dir = tls_dir();
  return {"-c", "nimbus.thrift.client.use.tls=true",
          "-c", "nimbus.thrift.tls.client.cert.path=" + (dir / (user + ".pem")).string(),
          "-c", "nimbus.thrift.tls.client.key.path=" + (dir / (user + "-key.pem")).string(),
          "-c", "nimbus.thrift.tls.client.ca.path=" + (dir / "ca.pem").string(),
          "-c", "storm.metrics.tls.cert.path=" + (dir / "metrics.pem").string(),
          "-c", "storm.metrics.tls.key.path=" + (dir / "metrics-key.pem").string(),
          "-c", "storm.metrics.tls.ca.path=" + (dir / "ca.pem").string(),
          "-c", "storm.metrics.auth.user=prometheus",
          "-c", "storm.metrics.auth.password.file=" + metrics_password_file().string()};
}

std::string DevCluster::supervisor_id(int index) const {
  return "supervisor-" + std::to_string(index + 1);
}

std::filesystem::path DevCluster::supervisor_dir(int index) const {
  return work_dir_ / supervisor_id(index);
}

std::vector<int> DevCluster::supervisor_ports(int index) const {
  return supervisor_ports_.at(static_cast<std::size_t>(index));
}

const DevProcess& DevCluster::supervisor(int index) const {
  return supervisors_.at(static_cast<std::size_t>(index));
}

const DevProcess& DevCluster::nimbus(int index) const {
  return nimbuses_.at(static_cast<std::size_t>(index));
}

Status DevCluster::stop_supervisor(int index) {
  auto& p = supervisors_.at(static_cast<std::size_t>(index));
  const int killed = terminate_processes({p.process}, std::chrono::seconds(20));
  if (killed > 0) {
    return Status(ErrorCode::kTimeout, p.name + " needed SIGKILL to stop");
  }
  return Status::ok();
}

Status DevCluster::kill_supervisor(int index) {
  auto& p = supervisors_.at(static_cast<std::size_t>(index));
  if (!process_alive(p.process)) return Status(ErrorCode::kNotFound, p.name + " is not running");
  ::kill(p.process.pid, SIGKILL);
  terminate_processes({p.process}, std::chrono::seconds(5));
  // Its workers go with the machine.
  const std::vector<ProcessId> workers = live_workers(index);
  for (const auto& w : workers) ::kill(w.pid, SIGKILL);
  terminate_processes(workers, std::chrono::seconds(5));
  return Status::ok();
}

std::vector<ProcessId> DevCluster::live_workers(int index) const {
  std::vector<ProcessId> out;
  std::error_code ec;
  for (const auto& entry :
       std::filesystem::directory_iterator(supervisor_dir(index) / "workers", ec)) {
    auto text = worker_process::read_whole_file(entry.path() / "heartbeat");
    if (!text) continue;
    auto beat = worker_process::heartbeat_from_json(*text);
    if (!beat || beat->pid <= 0) continue;
    const ProcessId worker{static_cast<pid_t>(beat->pid), 0};
    if (process_alive(worker)) out.push_back(worker);
  }
  return out;
}

Status DevCluster::start_supervisor(int index) {
  return launch(supervisors_.at(static_cast<std::size_t>(index)));
}

Status DevCluster::kill_nimbus(int index) {
  auto& p = nimbuses_.at(static_cast<std::size_t>(index));
  if (!process_alive(p.process)) return Status(ErrorCode::kNotFound, p.name + " is not running");
  ::kill(p.process.pid, SIGKILL);
  terminate_processes({p.process}, std::chrono::seconds(5));
  return Status::ok();
}

Status DevCluster::start_nimbus(int index) {
  auto& p = nimbuses_.at(static_cast<std::size_t>(index));
  if (Status s = launch(p); !s) return s;
  const int port = nimbus_port(index);
  return wait_until(p, [&] { return loopback_port_open(port); }, "listen");
}

void DevCluster::describe(std::ostream& out) const {
  if (zookeeper_) {
    out << "  zookeeper   " << zookeeper_connect_ << "  pid " << zookeeper_->process.pid
        << "  log " << zookeeper_->log.string() << "\n";
  } else {
    out << "  zookeeper   " << zookeeper_connect_ << " (given)\n";
  }
  for (std::size_t i = 0; i < nimbuses_.size(); ++i) {
    out << "  " << nimbuses_[i].name << "    127.0.0.1:" << nimbus_ports_[i] << "  pid "
        << nimbuses_[i].process.pid << "  log " << nimbuses_[i].log.string();
    if (i < nimbus_metrics_ports_.size()) out << "  /metrics :" << nimbus_metrics_ports_[i];
    out << "\n";
  }
  for (std::size_t i = 0; i < supervisors_.size(); ++i) {
    const int index = static_cast<int>(i);
    out << "  " << supervisors_[i].name << "  rack r" << (index % options_.racks + 1)
        << "  slots " << join(supervisor_ports_[i]) << "  pid " << supervisors_[i].process.pid
        << "  log " << supervisors_[i].log.string();
    if (i < supervisor_metrics_ports_.size()) out << "  /metrics :" << supervisor_metrics_ports_[i];
    if (i < logviewer_ports_.size()) out << "  logs :" << logviewer_ports_[i];
    out << "\n";
  }
  if (!supervisors_.empty()) {
    out << "  each worker serves /metrics on its slot port + " << worker_metrics_offset()
        << " (worker.metrics.port.offset)\n";
  }
  if (share_memory_mb_ > 0 || share_cpu_ > 0) {
    out << "  each supervisor offers its share of this machine:";
    if (share_memory_mb_ > 0) out << " " << share_memory_mb_ << " MB";
    if (share_cpu_ > 0)
      out << (share_memory_mb_ > 0 ? "," : "") << " " << share_cpu_ << " CPU points";
    out << " (supervisor.memory.capacity.mb, supervisor.cpu.capacity)\n";
  }
  if (ui_) {
    out << "  ui          " << ui_url() << "  pid " << ui_->process.pid << "  log "
        << ui_->log.string() << "\n";
  }
  if (prometheus_) {
    out << "  prometheus  " << prometheus_->url() << "  pid " << prometheus_->pid()
        << "  (targets from " << metrics_sd_dir().string() << ")\n";
  }
  if (options_.secure) {
    out << "secure: nimbus speaks only mutual TLS and checks every call (nimbus.authorizer:\n"
        << "        simple-acl); certificates in " << tls_dir().string() << "\n"
        << "        users: alice (the client config below), bob (--config "
        << user_config("bob").string() << "),\n"
        << "        admin (--config " << user_config("admin").string() << ", in nimbus.admins)\n"
        << "        workers: mutual TLS between them; every /metrics: HTTPS, user prometheus,\n"
        << "        password in " << metrics_password_file().string() << "\n"
        << "        ui and log viewers: HTTPS with a client certificate: import "
        << (tls_dir() / "alice.p12").string() << "\n"
        << "        (password rstorm) into the browser, or curl --cacert "
        << (tls_dir() / "ca.pem").string() << "\n        --cert "
        << (tls_dir() / "alice.pem").string() << " --key " << (tls_dir() / "alice-key.pem").string()
        << "\n";
  }
  // The word count beside these binaries (a build tree's lib/), named as
  // the user can type it; an installed rstorm has no built example, so a
  // library of the user's own (rstorm new-topology writes one).
  std::error_code ec;
  const auto example = options_.bin_dir / ".." / "lib" / "libword_count.so";
  std::string library = "YOUR_TOPOLOGY.so";
  std::string name = "NAME";
  if (std::filesystem::is_regular_file(example, ec)) {
    const auto relative =
        std::filesystem::relative(example, std::filesystem::current_path(ec), ec);
    library = (ec || relative.empty() || relative.string().starts_with("../..")
                   ? std::filesystem::weakly_canonical(example, ec)
                   : relative)
                  .string();
    name = "wc";
  }
  out << "client config: " << client_config().string() << "\n"
      << "submit:  rstorm submit " << library << " --name " << name << " --config "
      << client_config().string() << "\n";
  if (!options_.secure) {
    out << "   or:   rstorm submit " << library << " --name " << name << " -c 'nimbus.seeds="
        << nimbus_seeds() << "'\n";
  }
  if (name == "NAME") out << "         (`rstorm new-topology NAME` writes a topology project)\n";
  out << "then:    rstorm list|describe " << name << "|cluster --config "
      << client_config().string() << "\n";
}

}  // namespace rstorm::supervisor
