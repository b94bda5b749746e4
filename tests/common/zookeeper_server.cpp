#include "tests/common/zookeeper_server.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zookeeper/zookeeper.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

namespace rstorm::testing {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kPollInterval = std::chrono::milliseconds(50);

sockaddr_in loopback(int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return addr;
}

// Sends a four-letter word and returns the reply ("" on any failure).
std::string four_letter_word(int port, const char* word) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return "";
  timeval timeout{2, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  sockaddr_in addr = loopback(port);
  std::string reply;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      ::send(fd, word, std::strlen(word), MSG_NOSIGNAL) == static_cast<ssize_t>(std::strlen(word))) {
    char buf[256];
    ssize_t n;
    while ((n = ::recv(fd, buf, sizeof(buf), 0)) > 0) reply.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return reply;
}

void ignore_events(zhandle_t*, int, int, const char*, void*) {}

}  // namespace

Result<int> free_loopback_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status(ErrorCode::kIoError, std::string("socket: ") + std::strerror(errno));
  sockaddr_in addr = loopback(0);
  socklen_t len = sizeof(addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    int err = errno;
    ::close(fd);
    return Status(ErrorCode::kIoError, std::string("bind 127.0.0.1:0: ") + std::strerror(err));
  }
  ::close(fd);
  return static_cast<int>(ntohs(addr.sin_port));
}

ZooKeeperServer::ZooKeeperServer(Options options, std::filesystem::path dir, int port)
    : options_(std::move(options)),
      dir_(dir),
      data_dir_(dir / "data"),
      config_file_(dir / "zoo.cfg"),
      log_file_(dir / "zookeeper.log"),
      port_(port) {}

Result<std::unique_ptr<ZooKeeperServer>> ZooKeeperServer::start(Options options) {
  Status last;
  // A port picked by free_loopback_port() can be taken before ZooKeeper binds
  // it: try a few ports.
  for (int attempt = 0; attempt < 3; ++attempt) {
    auto port = free_loopback_port();
    if (!port) return port.status();
    char tmpl[] = "/tmp/rstorm-zk-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) {
      return Status(ErrorCode::kIoError, std::string("mkdtemp: ") + std::strerror(errno));
    }
    std::unique_ptr<ZooKeeperServer> server(new ZooKeeperServer(options, tmpl, *port));
    std::filesystem::create_directories(server->data_dir_);
    std::ofstream(server->config_file_) << "tickTime=" << options.tick_time_ms << "\n"
                                        << "dataDir=" << server->data_dir_.string() << "\n"
                                        << "clientPort=" << *port << "\n"
                                        << "clientPortAddress=127.0.0.1\n"
                                        << "admin.enableServer=false\n"
                                        << "4lw.commands.whitelist=ruok,srvr\n";
    last = server->launch();
    if (last) return server;
  }
  return last;
}

ZooKeeperServer::~ZooKeeperServer() {
  (void)stop();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::string ZooKeeperServer::connect_string() const {
  return "127.0.0.1:" + std::to_string(port_);
}

bool ZooKeeperServer::is_ready() const { return four_letter_word(port_, "ruok") == "imok"; }

Status ZooKeeperServer::launch() {
  std::vector<std::string> args = {options_.java,
                                   "-Xms16m",
                                   "-Xmx128m",
                                   "-XX:+UseSerialGC",
                                   "-XX:TieredStopAtLevel=1",
                                   "-Djava.net.preferIPv4Stack=true",
                                   "-cp",
                                   options_.classpath,
                                   "org.apache.zookeeper.server.ZooKeeperServerMain",
                                   config_file_.string()};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string log = log_file_.string();

  pid_t pid = ::fork();
  if (pid < 0) return Status(ErrorCode::kIoError, std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    // Child: only async-signal-safe calls until exec.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive a crashed test
    int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      ::dup2(fd, STDOUT_FILENO);
      ::dup2(fd, STDERR_FILENO);
    }
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  pid_ = pid;

  const auto deadline = Clock::now() + options_.start_timeout;
  while (Clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return Status(ErrorCode::kUnavailable,
                    "ZooKeeper exited during start-up on port " + std::to_string(port_) +
                        " (status " + std::to_string(status) + "); log " + log + ":\n" +
                        log_tail());
    }
    if (is_ready()) return Status::ok();
    std::this_thread::sleep_for(kPollInterval);
  }
  (void)stop();
  return Status(ErrorCode::kTimeout, "ZooKeeper on port " + std::to_string(port_) +
                                         " not ready within " +
                                         std::to_string(options_.start_timeout.count()) +
                                         " ms; log " + log + ":\n" + log_tail());
}

Status ZooKeeperServer::stop() {
  if (pid_ <= 0) return Status::ok();
  ::kill(pid_, SIGTERM);
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  int status = 0;
  while (::waitpid(pid_, &status, WNOHANG) == 0) {
    if (Clock::now() > deadline) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
      break;
    }
    std::this_thread::sleep_for(kPollInterval);
  }
  pid_ = -1;
  return Status::ok();
}

Status ZooKeeperServer::restart() {
  if (Status s = stop(); !s) return s;
  return launch();
}

std::string ZooKeeperServer::log_tail() const {
  std::ifstream in(log_file_);
  std::string line;
  std::vector<std::string> lines;
  while (std::getline(in, line)) lines.push_back(line);
  std::ostringstream out;
  for (std::size_t i = lines.size() > 20 ? lines.size() - 20 : 0; i < lines.size(); ++i) {
    out << lines[i] << "\n";
  }
  return out.str();
}

Status ZooKeeperServer::expire_session(std::int64_t session_id,
                                       const std::string& password) const {
  // Attaching to the session takes its connection away from the owner, whose
  // client reconnects at once. If the owner wins that race, our close goes out
  // on a connection the server has already dropped and the session lives on.
  // So attach again until the server answers that the session has expired.
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  int attempts = 0;
  while (Clock::now() < deadline) {
    ++attempts;
    clientid_t id{};
    id.client_id = session_id;
    std::memcpy(id.passwd, password.data(), std::min(password.size(), sizeof(id.passwd)));
    zhandle_t* zh =
        zookeeper_init(connect_string().c_str(), &ignore_events, 10000, &id, nullptr, 0);
    if (zh == nullptr) return Status(ErrorCode::kUnavailable, "zookeeper_init failed");
    const auto attach_deadline = std::min(deadline, Clock::now() + std::chrono::seconds(30));
    int state = zoo_state(zh);
    while (state != ZOO_CONNECTED_STATE && state != ZOO_EXPIRED_SESSION_STATE &&
           Clock::now() < attach_deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      state = zoo_state(zh);
    }
    zookeeper_close(zh);  // closing the shared session ends it for its owner too
    if (state == ZOO_EXPIRED_SESSION_STATE) return Status::ok();
  }
  return Status(ErrorCode::kTimeout, "session " + std::to_string(session_id) +
                                         " still alive after " + std::to_string(attempts) +
                                         " attempts to expire it");
}

}  // namespace rstorm::testing
