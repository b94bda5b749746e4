#include "common/metrics/endpoint.hpp"

#include <filesystem>

#include "common/metrics/process_metrics.hpp"

namespace rstorm::metrics {

api::Result<std::unique_ptr<MetricsEndpoint>> MetricsEndpoint::start(EndpointOptions options) {
  std::unique_ptr<MetricsEndpoint> e(new MetricsEndpoint());
  auto server = MetricsServer::start(options.host, options.port, e->registry_, options.security);
  if (!server.ok()) return server.status();
  e->server_ = std::move(server).value();
  e->process_ = add_process_metrics(e->registry_, options.process_labels);
  if (!options.sd_file.empty()) {
    api::Status s =
        write_file_sd(options.sd_file,
                      {{e->server_->target(), sd_labels_for(options.security, options.sd_labels)}});
    if (!s.is_ok()) return s;
  }
  e->options_ = std::move(options);
  return e;
}

MetricsEndpoint::~MetricsEndpoint() {
  if (!options_.sd_file.empty()) remove_file_sd(options_.sd_file);
}

Labels sd_labels_for(const ServerSecurity& security, Labels labels) {
  if (security.tls()) labels.emplace_back("__scheme__", "https");
  return labels;
}

std::string metrics_sd_dir(const Config& config) {
  const Config::Entry* e = config.find("storm.metrics.sd.dir");
  if (e != nullptr && !e->value.is_null()) return config.get_string("storm.metrics.sd.dir");
  return (std::filesystem::path(config.get_string("storm.local.dir", "rstorm-local")) / "metrics-sd")
      .string();
}

}  // namespace rstorm::metrics
