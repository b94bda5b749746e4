// `rstorm dev-cluster [--supervisors 3] [--racks 2]`: a real cluster on this
// machine in the foreground (ZooKeeper, rstorm-nimbus, supervisors; see
// supervisor/dev_cluster.hpp). Ctrl-C stops everything, leaving no process.
// The client rstorm.yaml it prints lists every nimbus in nimbus.seeds, so
// `rstorm ... --config <it>` keeps working after the leader dies.
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <iostream>

#include "cli/command.hpp"
#include "common/logger.hpp"
#include "supervisor/dev_cluster.hpp"

namespace {

struct DevClusterArgs {
  rstorm::supervisor::DevClusterOptions options;
  std::string work_dir;
  bool no_ui = false;
};

int run_dev_cluster(DevClusterArgs& args) {
  // Ctrl-C and SIGTERM are taken by sigwait; children get an empty mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  if (!args.work_dir.empty()) {
    args.options.work_dir = args.work_dir;
    args.options.keep_work_dir = true;
  }
  const auto begin = std::chrono::steady_clock::now();
  // Supervisors go to racks r1..rN round robin: fewer supervisors fill fewer racks.
  const int racks = std::max(1, std::min(args.options.racks, args.options.supervisors));
  auto count = [](int n, const char* one) {
    return std::to_string(n) + " " + one + (n == 1 ? "" : "s");
  };
  std::cout << "rstorm dev-cluster: starting ZooKeeper, " << args.options.nimbuses << " nimbus, "
            << count(args.options.supervisors, "supervisor") << " on " << count(racks, "rack")
            << "..." << std::endl;
  auto cluster = rstorm::supervisor::DevCluster::start(
      args.options, rstorm::Logger::to_stderr("dev-cluster", spdlog::level::warn));
  if (!cluster) {
    std::cerr << "rstorm dev-cluster: " << cluster.status().message() << "\n";
    return cluster.code() == rstorm::ErrorCode::kInvalidArgument ? rstorm::cli::kExitUsage
                                                                 : rstorm::cli::kExitFailure;
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  std::cout << "rstorm dev-cluster: up in " << static_cast<int>(secs * 10) / 10.0 << " s; work dir "
            << (*cluster)->work_dir().string() << "\n";
  (*cluster)->describe(std::cout);
  std::cout << "Ctrl-C stops everything." << std::endl;
  int signal_number = 0;
  sigwait(&signals, &signal_number);
  std::cout << "\nrstorm dev-cluster: stopping nimbus, supervisors (and their workers), ZooKeeper..."
            << std::endl;
  (*cluster)->stop();
  std::cout << "rstorm dev-cluster: stopped" << std::endl;
  return rstorm::cli::kExitOk;
}

}  // namespace

RSTORM_CLI_COMMAND("dev-cluster", [](CLI::App& app, int& exit_code) {
  auto* sub = app.add_subcommand(
      "dev-cluster", "Run ZooKeeper, nimbus and supervisors on this machine until Ctrl-C");
  auto args = std::make_shared<DevClusterArgs>();
  sub->add_option("--supervisors", args->options.supervisors, "how many supervisors")
      ->default_val(3);
  sub->add_option("--racks", args->options.racks, "racks r1..rN, round robin")->default_val(2);
  sub->add_option("--slots", args->options.slots, "worker slots per supervisor")->default_val(4);
  sub->add_option("--nimbuses", args->options.nimbuses, "nimbus instances (the others standby)")
      ->default_val(1);
  sub->add_option("--work-dir", args->work_dir,
                  "keep logs and state here (default: a temporary dir, removed on exit)");
  sub->add_option("-c", args->options.overrides, "key=value for every daemon (repeatable)");
  sub->add_flag("--prometheus", args->options.prometheus,
                "Also start a Prometheus server (Debian's prometheus) on loopback that scrapes "
                "nimbus, supervisors and workers, and print its URL");
  sub->add_flag("--secure", args->options.secure,
                "Secure mode: a throw-away CA issues certificates for the daemons and three users "
                "(alice, bob, admin); nimbus speaks only mutual TLS and checks every call "
                "against the ACL keys; the printed client config is alice's");
  sub->add_flag("--no-ui", args->no_ui,
                "Do not start rstorm-ui (by default its pages and REST API are served on a free "
                "loopback port, printed as 'ui  http://127.0.0.1:<port>')");
  sub->callback([&exit_code, args] {
    args->options.ui = !args->no_ui;
    exit_code = run_dev_cluster(*args);
  });
});
