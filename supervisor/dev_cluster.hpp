// DevCluster: a whole rstorm cluster on this machine as real processes, for
// `rstorm dev-cluster` and the end-to-end tests: a ZooKeeper server (Debian's
// package, zoo.cfg on 127.0.0.1, a free port, a temporary data folder) unless
// one is given, one or more rstorm-nimbus, and N rstorm-supervisor (own local
// dir, slots on free ports, racks r1..rR round robin). Every process runs in
// its own process group with its log under the work dir; stop() stops them
// (supervisors first, so that they stop their workers) by pid, SIGTERM then
// SIGKILL, and reaps them: nothing is left behind.
//
// Thread contract: thread-compatible (one owner drives it).
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "common/logger.hpp"
#include "common/metrics/prometheus_server.hpp"
#include "common/status.hpp"
#include "rstorm/config.hpp"
#include "supervisor/process_control.hpp"

namespace rstorm::supervisor {

struct DevClusterOptions {
  int supervisors = 3;  // default 3
  int racks = 2;        // default 2: supervisor i is on rack r((i % racks) + 1)
  int slots = 4;        // worker ports per supervisor; default 4
  int nimbuses = 1;     // default 1; more run as standbys
  // Where rstorm-nimbus, rstorm-supervisor and rstorm-worker are. Default:
  // the running executable's directory.
  std::filesystem::path bin_dir;
  // Holds every log, data and local dir. Default: a new temporary directory,
  // removed by stop() unless keep_work_dir.
  std::filesystem::path work_dir;
  bool keep_work_dir = false;
  // "127.0.0.1:port" of a running ZooKeeper; empty: start one.
  std::string zookeeper_connect;
  std::string java = "/usr/bin/java";
  std::string zookeeper_classpath =
      "/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar";
  // key=value given to every daemon (e.g. short timeouts in tests).
  std::vector<std::string> overrides;
  // How long each process may take to come up. Default 60 s.
  std::chrono::milliseconds start_timeout{60000};
  // Also start a Prometheus server (Debian's) on loopback that scrapes every
  // nimbus, supervisor and worker through the file SD files the daemons write
  // into <work_dir>/metrics-sd. Default false.
  bool prometheus = false;
  // Also start rstorm-ui (its pages and REST API) on a free loopback port.
  // Default false (`rstorm dev-cluster` turns it on).
  bool ui = false;
  std::chrono::seconds prometheus_scrape_interval{5};
  // Secure mode (`rstorm dev-cluster --secure`): a throw-away CA under
  // <work_dir>/tls issues certificates for nimbus, the supervisors, rstorm-ui
  // and three users (alice, bob, admin); nimbus serves only mutual TLS and
  // checks every call with the simple-acl authorizer (admin in nimbus.admins);
  // workers authenticate each other and encrypt their connections (mutual TLS
  // with the supervisors' certificate); every /metrics is HTTPS with basic
  // authentication (user prometheus, metrics_password_file()), which the dev
  // cluster's Prometheus and rstorm-ui use; the daemons' ZooKeeper nodes carry
  // digest ACLs.
  // client_config() is alice's; user_config("bob") and user_config("admin")
  // are the others'. Default false.
  bool secure = false;
};

struct DevProcess {
  std::string name;  // "zookeeper", "nimbus-1", "supervisor-2"
  ProcessId process;
  std::filesystem::path log;
  std::vector<std::string> args;  // to start it again
  std::filesystem::path binary;
};

class DevCluster {
 public:
  // Starts everything and waits until ZooKeeper answers, every nimbus listens
  // and every supervisor has registered. On failure stops what it started and
  // names the process, with the tail of its log.
  static Result<std::unique_ptr<DevCluster>> start(DevClusterOptions options, Logger logger);
  ~DevCluster();  // stop()
  DevCluster(const DevCluster&) = delete;
  DevCluster& operator=(const DevCluster&) = delete;

  // Stops every process (supervisors, nimbuses, ZooKeeper). Idempotent.
  void stop();
  // Where everything listens and how to submit.
  void describe(std::ostream& out) const;

  const std::filesystem::path& work_dir() const { return work_dir_; }
  std::string zookeeper_connect() const { return zookeeper_connect_; }
  int zookeeper_port() const { return zookeeper_port_; }
  int nimbus_port(int index) const { return nimbus_ports_.at(static_cast<std::size_t>(index)); }
  // A client config: ZooKeeper, and every nimbus as a "127.0.0.1:<port>"
  // entry of nimbus.seeds, so a client keeps working after a failover.
  std::filesystem::path client_config() const { return work_dir_ / "rstorm.yaml"; }
  // The daemons' config: client_config() in plain mode; in secure mode a
  // file of their own (mode 0600) that also holds the ZooKeeper digest.
  std::filesystem::path daemon_config() const;
  // Secure mode: the client config of a user ("alice" is client_config()).
  std::filesystem::path user_config(const std::string& user) const;
  bool secure() const { return options_.secure; }
  // Secure mode: the daemons' ZooKeeper digest ("rstorm:<password>",
  // storm.zookeeper.auth.payload); "" in plain mode.
  const std::string& zookeeper_auth_payload() const { return zookeeper_auth_payload_; }
  // Secure mode: where the CA, certificates and keys are.
  std::filesystem::path tls_dir() const { return work_dir_ / "tls"; }
  // Secure mode: the metrics endpoints' basic-authentication password.
  std::filesystem::path metrics_password_file() const { return tls_dir() / "metrics.password"; }
  // nimbus.seeds of the client config, as YAML: ["127.0.0.1:p1", "127.0.0.1:p2"].
  std::string nimbus_seeds() const;
  // -c arguments a client needs to reach exactly nimbus `index`.
  std::vector<std::string> client_overrides(int index = 0) const;
  std::string supervisor_id(int index) const;
  std::filesystem::path supervisor_dir(int index) const;
  std::vector<int> supervisor_ports(int index) const;
  const DevProcess& supervisor(int index) const;
  const DevProcess& nimbus(int index) const;
  // Where the daemons write their file SD files (storm.metrics.sd.dir).
  std::filesystem::path metrics_sd_dir() const { return work_dir_ / "metrics-sd"; }
  int nimbus_metrics_port(int index) const {
    return nimbus_metrics_ports_.at(static_cast<std::size_t>(index));
  }
  // The Prometheus server of options.prometheus; nullptr without.
  const metrics::PrometheusServer* prometheus() const { return prometheus_.get(); }
  int num_supervisors() const { return static_cast<int>(supervisors_.size()); }
  // rstorm-ui's address, "http://127.0.0.1:<port>"; "" without options.ui.
  std::string ui_url() const;
  // The log viewer port of supervisor `index`.
  int logviewer_port(int index) const {
    return logviewer_ports_.at(static_cast<std::size_t>(index));
  }

  // SIGTERM and wait (the supervisor stops its workers). 
  Status stop_supervisor(int index);
  // The worker processes of supervisor `index` that run now: every one whose
  // heartbeat file names a live pid.
  std::vector<ProcessId> live_workers(int index) const;
  // SIGKILL a supervisor and every worker it runs (a machine lost).
  Status kill_supervisor(int index);
  // Starts a stopped supervisor again (same id, local dir and slots).
  Status start_supervisor(int index);
  // SIGKILL a nimbus (a crash).
  Status kill_nimbus(int index);
  Status start_nimbus(int index);

 private:
  DevCluster(DevClusterOptions options, Logger logger);
  Status start_all();
  Status start_zookeeper();
  Status make_certificates();
  // Client settings of `user` (secure mode), as rstorm.yaml lines.
  std::string tls_client_yaml(const std::string& user) const;
  // -c arguments for a daemon connecting to nimbus as `user` (secure mode).
  std::vector<std::string> tls_client_overrides(const std::string& user) const;
  Status launch(DevProcess& process);
  // A free loopback port for `name` ("nimbus-1", "supervisor-2 slot 3"): the
  // one it had in this work dir (<work_dir>/ports.json) while that is free,
  // else a new one (free_loopback_port), remembered there. With
  // `companion_offset`, port + offset is free and claimed too.
  Result<int> port_for(const std::string& name, int companion_offset = 0);
  // The defaults under options_.overrides (the defaults alone when the
  // overrides do not load: the daemons, given the same overrides, refuse
  // them naming the key).
  Config overrides_config() const;
  // worker.metrics.port.offset as the overrides set it (default 1000).
  int worker_metrics_offset() const;
  // Sets share_memory_mb_ and share_cpu_, each supervisor's share of this
  // machine, unless the overrides set the capacity.
  void divide_machine();
  Status wait_until(const DevProcess& process, const std::function<bool()>& ready,
                    const std::string& what);
  std::string tail_of(const std::filesystem::path& log) const;

  DevClusterOptions options_;
  const Logger logger_;
  std::filesystem::path work_dir_;
  bool own_work_dir_ = false;
  std::string zookeeper_connect_;
  int zookeeper_port_ = 0;
  std::string zookeeper_auth_payload_;
  std::unique_ptr<DevProcess> zookeeper_;  // null when given
  std::vector<DevProcess> nimbuses_;
  std::vector<int> nimbus_ports_;
  std::vector<DevProcess> supervisors_;
  std::vector<std::vector<int>> supervisor_ports_;
  // Each supervisor's share of the machine (divide_machine); 0: the
  // overrides set it.
  std::int64_t share_memory_mb_ = 0;
  std::int64_t share_cpu_ = 0;
  std::vector<int> nimbus_metrics_ports_;
  std::vector<int> logviewer_ports_;
  std::vector<int> supervisor_metrics_ports_;
  std::unique_ptr<DevProcess> ui_;  // null without options.ui
  int ui_port_ = 0;
  std::map<std::string, int> remembered_ports_;  // port_for's, from ports.json
  bool ports_loaded_ = false;
  std::vector<int> claimed_ports_;  // port_for's, released by stop()
  std::unique_ptr<metrics::PrometheusServer> prometheus_;
  bool stopped_ = false;
};

// A free TCP port on 127.0.0.1 (bound, then released), chosen at random below
// the ephemeral range so that no outgoing connection takes it before it is used,
// and claimed for this process (a file in $TMPDIR/rstorm-port-claims) so that
// no other process of the machine picking ports this way takes it too.
Result<int> free_loopback_port();
// Claims `port` for this process among every process of this machine that
// picks ports with free_loopback_port (test harnesses and dev clusters running
// side by side): a file named after the port in $TMPDIR/rstorm-port-claims,
// holding our pid, created whole or not at all. The claim lasts as long as the
// process, so that two clusters started at once never pick the same port
// between the check and the bind; one whose process is gone is taken over.
// False when a live process (this one included) holds it; true when claimed,
// or when the folder cannot hold claims.
bool claim_loopback_port(int port);
// Gives up this process's claim on `port` (a cluster that stopped using it).
void release_loopback_port(int port);
// Whether something accepts TCP connections on 127.0.0.1:port.
bool loopback_port_open(int port);
// Sends `bytes` on a new connection to 127.0.0.1:port, closes the sending side
// and returns what comes back until the peer closes (or `read_timeout` passes
// without a byte); nullopt when nothing accepts the connection.
std::optional<std::string> loopback_exchange(int port, std::string_view bytes,
                                             std::chrono::seconds read_timeout);
// Sends a ZooKeeper four-letter word ("ruok") to 127.0.0.1:port; its answer.
std::string zookeeper_four_letter(int port, const std::string& word);

}  // namespace rstorm::supervisor
