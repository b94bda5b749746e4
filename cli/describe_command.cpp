// `rstorm describe N [--json]`: status, placement by rack/node/worker,
// resources used against requested, network cost, last errors, and each
// component's counts read from its workers' /metrics.
#include <iostream>
#include <nlohmann/json.hpp>

#include "client_flags.hpp"
#include "command.hpp"
#include "common/metrics/security_config.hpp"
#include "nimbus/cli_support.hpp"
#include "nimbus/render.hpp"
#include "ui/topology_stats.hpp"
#include "ui/ui_api.hpp"

namespace {

struct DescribeArgs {
  std::string name;
  rstorm::nimbus::ClientFlags flags;
};

// The topology's workers' /metrics (slot port + worker.metrics.port.offset,
// with the client's scrape TLS and credentials), summed per component.
struct Counts {
  std::vector<rstorm::ui::ComponentTotals> totals;
  rstorm::ui::TopologySample sample;
};

Counts read_counts(const rstorm::Config& config, const rstorm::thrift::TopologyInfo& info) {
  Counts out;
  const int offset = static_cast<int>(config.get_int("worker.metrics.port.offset", 1000));
  const auto client = rstorm::metrics::scrape_client_from_config(config);
  out.sample = rstorm::ui::sample_topology(info, offset, [&](const std::string& host, int port) {
    // A second at most each: scripts poll describe (bench/chaos gives it 5 s).
    auto text = rstorm::ui::scrape_worker_metrics(host, port, client, std::chrono::seconds(1));
    if (!text && !client.https && text.status().message().find("end of stream") != std::string::npos) {
      // An HTTPS endpoint closes a plain-HTTP request without a word.
      return rstorm::Result<std::string>(rstorm::Status(
          text.status().code(),
          text.status().message() + " (an HTTPS /metrics? this config sets no "
                                    "storm.metrics.tls.*)"));
    }
    return text;
  });
  out.totals = rstorm::ui::component_totals(info.structure, out.sample);
  return out;
}

nlohmann::json counts_json(const Counts& counts) {
  nlohmann::json components = nlohmann::json::object();
  for (const auto& t : counts.totals) {
    if (t.executors == 0) continue;
    auto n = [](double v) { return static_cast<long long>(v); };
    components[t.id] = {{"kind", t.spout ? "spout" : "bolt"},
                        {"executors", t.executors},
                        {"emitted", n(t.counts.emitted)},
                        {"transferred", n(t.counts.transferred)},
                        {"executed", n(t.counts.executed)},
                        {"acked", n(t.counts.acked)},
                        {"failed", n(t.counts.failed)},
                        {"errors", n(t.counts.errors)}};
  }
  return components;
}

RSTORM_CLI_COMMAND("describe", [](CLI::App& app, int& exit_code) {
  auto args = std::make_shared<DescribeArgs>();
  auto* sub = app.add_subcommand("describe", "Show a topology's status, placement and counts");
  sub->add_option("name", args->name, "topology name or id")->required();
  rstorm::cli::add_client_flags(sub, args->flags, rstorm::cli::JsonFlag::kOffered);
  sub->callback([&exit_code, args] {
    using namespace rstorm::nimbus;
    auto config = load_client_config(args->flags);
    if (!config) return void(exit_code = report_error("describe", config.status(), true));
    auto client = connect_for_cli(args->flags);
    if (!client) return void(exit_code = report_error("describe", client.status(), true));
    auto info = (*client)->topology_info(args->name);
    if (!info) return void(exit_code = report_error("describe", info.status()));
    auto placement = (*client)->placement(args->name);
    if (!placement) return void(exit_code = report_error("describe", placement.status()));
    Counts counts;
    try {
      counts = read_counts(*config, *info);
    } catch (const rstorm::ConfigError& e) {
      return void(exit_code = report_error(
                      "describe", rstorm::Status(rstorm::ErrorCode::kInvalidArgument, e.what()),
                      true));
    }
    if (args->flags.json) {
      auto j = nlohmann::json::parse(render_describe_json(*info, *placement));
      j["counts"] = counts_json(counts);
      j["counts_unreachable"] = counts.sample.unreachable;
      std::cout << j.dump(2) << "\n";
    } else {
      std::cout << render_describe_text(*info, *placement)
                << rstorm::ui::render_counts_text(counts.totals, counts.sample);
    }
    exit_code = kCliOk;
  });
});

}  // namespace
