#include "ui/ui_api.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "common/metrics/http_get.hpp"
#include "ui/ui_assets.hpp"

namespace rstorm::ui {

using http::HttpRequest;
using http::HttpResponse;
using json = nlohmann::json;
using metrics::url_encode;

namespace {

constexpr std::int64_t kDefaultWindow = 600;
const std::vector<std::int64_t> kWindows = {600, 10800, 86400, 0};  // 0: all time

std::string window_name(std::int64_t w) { return w == 0 ? ":all-time" : std::to_string(w); }

std::string pretty_duration(std::int64_t secs) {
  if (secs < 0) secs = 0;
  const std::int64_t d = secs / 86400, h = secs / 3600 % 24, m = secs / 60 % 60, s = secs % 60;
  std::string out;
  if (d) out += std::to_string(d) + "d ";
  if (d || h) out += std::to_string(h) + "h ";
  if (d || h || m) out += std::to_string(m) + "m ";
  return out + std::to_string(s) + "s";
}

std::string window_pretty(std::int64_t w) { return w == 0 ? "All time" : pretty_duration(w); }

std::string fixed3(double v) {
  if (!std::isfinite(v)) v = 0;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

double round2(double v) { return std::isfinite(v) ? std::round(v * 100) / 100 : 0; }

std::string status_name(thrift::TopologyStatus::type s) { return thrift::to_string(s); }

int http_status_of(const Status& s) {
  switch (s.code()) {
    case ErrorCode::kNotFound: return 404;
    case ErrorCode::kInvalidArgument: return 400;
    case ErrorCode::kAlreadyExists: return 409;
    case ErrorCode::kPermissionDenied:
      return 403;
    case ErrorCode::kUnavailable:
    case ErrorCode::kTimeout: return 503;
    default: return 500;
  }
}

// `acting`: the call was made for the browser's user (UiOptions::act_for_users).
HttpResponse error_of(const Status& s, bool acting) {
  if (s.code() == ErrorCode::kPermissionDenied) {
    if (!acting) {
      // Without impersonation nimbus sees rstorm-ui as the user of its own
      // certificate, so say who was refused and what works.
      return HttpResponse::json_error(
          403, s.message() +
                   " (rstorm-ui acts on nimbus as the user of its own certificate; set "
                   "ui.impersonate.users with client certificates and nimbus.impersonation.acl, "
                   "or change the topology with `rstorm` and your certificate)");
    }
    return HttpResponse::json_error(403, s.message());
  }
  return HttpResponse::json_error(http_status_of(s), s.message());
}

// Splits the request's path as received, then decodes each part, so that a
// component named "a/b" (sent as a%2Fb) stays one part.
std::vector<std::string> split_path(const std::string& target) {
  const std::string path = target.substr(0, target.find('?'));
  std::vector<std::string> parts;
  std::size_t i = 0;
  while (i < path.size()) {
    const std::size_t slash = path.find('/', i);
    const std::string part = path.substr(i, slash == std::string::npos ? std::string::npos : slash - i);
    if (!part.empty()) parts.push_back(http::percent_decode(part, false));
    if (slash == std::string::npos) break;
    i = slash + 1;
  }
  return parts;
}

json yaml_to_json(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined: return nullptr;
    case YAML::NodeType::Sequence: {
      json out = json::array();
      for (const auto& item : node) out.push_back(yaml_to_json(item));
      return out;
    }
    case YAML::NodeType::Map: {
      json out = json::object();
      for (const auto& item : node) out[item.first.as<std::string>()] = yaml_to_json(item.second);
      return out;
    }
    case YAML::NodeType::Scalar: {
      const std::string text = node.Scalar();
      if (node.Tag() == "!") return text;  // quoted
      long long i = 0;
      double d = 0;
      bool b = false;
      if (YAML::convert<long long>::decode(node, i)) return i;
      if (YAML::convert<double>::decode(node, d)) return d;
      if (YAML::convert<bool>::decode(node, b)) return b;
      return text;
    }
  }
  return nullptr;
}

json config_value(const std::string& yaml) {
  try {
    return yaml_to_json(YAML::Load(yaml));
  } catch (const std::exception&) {
    return yaml;
  }
}

std::int64_t message_timeout(const thrift::TopologyInfo& info) {
  auto it = info.config.find("topology.message.timeout.secs");
  if (it == info.config.end()) return 30;
  const json v = config_value(it->second.value_yaml);
  return v.is_number_integer() ? v.get<std::int64_t>() : 30;
}

const thrift::ComponentDef* find_component(const thrift::TopologyInfo& info, const std::string& id) {
  for (const auto& c : info.structure.components) {
    if (c.id == id) return &c;
  }
  return nullptr;
}

std::string grouping_name(const thrift::Grouping& g) {
  switch (g.type) {
    case thrift::GroupingType::SHUFFLE: return "shuffle";
    case thrift::GroupingType::FIELDS: {
      std::string out = "fields(";
      for (std::size_t i = 0; i < g.fields.size(); ++i) out += (i ? "," : "") + g.fields[i];
      return out + ")";
    }
    case thrift::GroupingType::ALL: return "all";
    case thrift::GroupingType::GLOBAL: return "global";
    case thrift::GroupingType::DIRECT: return "direct";
    case thrift::GroupingType::LOCAL_OR_SHUFFLE: return "local_or_shuffle";
    case thrift::GroupingType::NONE: return "none";
  }
  return "?";
}

int num_tasks(const thrift::ComponentDef& c) { return c.num_tasks > 0 ? c.num_tasks : c.parallelism; }

// Supervisor id -> (host, log viewer port).
struct LogLinks {
  struct Viewer {
    std::string host;
    int port = -1;
    bool https = false;
  };
  std::map<std::string, Viewer> viewers;
  std::map<std::string, std::string> node_of_host;  // host -> supervisor id (first)

  // Each supervisor registers whether its log viewer serves HTTPS.
  explicit LogLinks(const thrift::ClusterSummary* cluster) {
    if (!cluster) return;
    for (const auto& s : cluster->supervisors) {
      const int port = s.info.__isset.logviewer_port ? s.info.logviewer_port : -1;
      viewers[s.info.id] = {s.info.host, port,
                            s.info.__isset.logviewer_https && s.info.logviewer_https};
      node_of_host.emplace(s.info.host, s.info.id);
    }
  }
  std::string link(const std::string& node_id, const std::string& topology_id, int port) const {
    auto it = viewers.find(node_id);
    if (it == viewers.end() || it->second.port <= 0) return "";
    return (it->second.https ? "https://" : "http://") + it->second.host + ":" +
           std::to_string(it->second.port) +
           "/log?file=" + url_encode(topology_id + "-" + std::to_string(port) + "/worker.log");
  }
  std::string link_by_host(const std::string& host, const std::string& topology_id, int port) const {
    auto it = node_of_host.find(host);
    return it == node_of_host.end() ? "" : link(it->second, topology_id, port);
  }
};

// Figures of one component (or one executor) over a window.
struct Figures {
  double emitted = 0, transferred = 0, acked = 0, failed = 0, executed = 0, errors = 0;
  double throttled = 0, waited = 0;
  double execute_latency_ms = 0, complete_latency_ms = 0;
  double capacity = 0;
  int executors = 0;
  double busy = 0, backpressured = 0;  // share of time, per executor on average
};

const char* backpressure_level(double share) {
  if (share <= 0.10) return "OK";
  if (share <= 0.50) return "LOW";
  return "HIGH";
}

Figures component_figures(const WindowStats* w, const std::string& component, bool spout) {
  Figures f;
  if (!w) return f;
  const auto& l = w->counts.latency;
  double exec_avg_s = 0;
  if (auto it = l.find(component); it != l.end()) {
    if (it->second.execute_count > 0) exec_avg_s = it->second.execute_sum / it->second.execute_count;
    if (it->second.complete_count > 0)
      f.complete_latency_ms = 1000 * it->second.complete_sum / it->second.complete_count;
  }
  f.execute_latency_ms = 1000 * exec_avg_s;
  ExecutorCounters sum;
  f.executors = sum_component(w->counts, component, &sum);
  f.emitted = sum.emitted;
  f.transferred = sum.transferred;
  f.acked = sum.acked;
  f.failed = sum.failed;
  f.executed = sum.executed;
  f.errors = sum.errors;
  f.throttled = sum.throttled_seconds;
  f.waited = sum.wait_seconds;
  for (const auto& [key, c] : w->counts.executors) {
    if (key.first == component && w->seconds > 0) {
      f.capacity = std::max(f.capacity, c.executed * exec_avg_s / w->seconds);  // the busiest
    }
  }
  if (f.executors > 0 && w->seconds > 0) {
    const double span = w->seconds * f.executors;
    f.busy = spout ? 0 : std::min(1.0, f.executed * exec_avg_s / span);
    f.backpressured = std::min(1.0 - f.busy, (spout ? f.throttled : f.waited) / span);
  }
  return f;
}

json error_json(const thrift::ErrorInfo& e, const LogLinks& links, const std::string& topology_id,
                std::int64_t now_ms) {
  return {{"component", e.component},
          {"error", e.message},
          {"time", e.time_ms},
          {"errorHost", e.host},
          {"errorPort", e.port},
          {"errorTask", e.task_id},
          {"errorLapsedSecs", std::max<std::int64_t>(0, (now_ms - e.time_ms) / 1000)},
          {"errorWorkerLogLink", links.link_by_host(e.host, topology_id, e.port)}};
}

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void add_common_stats(json& j, const Figures& f) {
  j["emitted"] = static_cast<std::int64_t>(f.emitted);
  j["transferred"] = static_cast<std::int64_t>(f.transferred);
  j["acked"] = static_cast<std::int64_t>(f.acked);
  j["failed"] = static_cast<std::int64_t>(f.failed);
  j["errors"] = static_cast<std::int64_t>(f.errors);
  j["busySeconds"] = round2(f.busy);
  j["backpressuredSeconds"] = round2(f.backpressured);
  j["idleSeconds"] = round2(std::max(0.0, 1.0 - f.busy - f.backpressured));
  j["backpressure"] = backpressure_level(f.backpressured);
}

json spout_json(const thrift::ComponentDef& c, const Figures& f) {
  json j = {{"spoutId", c.id}, {"encodedSpoutId", url_encode(c.id)},
            {"executors", c.parallelism}, {"tasks", num_tasks(c)},
            {"completeLatency", fixed3(f.complete_latency_ms)}};
  add_common_stats(j, f);
  return j;
}

json bolt_json(const thrift::ComponentDef& c, const Figures& f) {
  json j = {{"boltId", c.id},
            {"encodedBoltId", url_encode(c.id)},
            {"executors", c.parallelism},
            {"tasks", num_tasks(c)},
            {"executed", static_cast<std::int64_t>(f.executed)},
            {"executeLatency", fixed3(f.execute_latency_ms)},
            {"processLatency", fixed3(f.execute_latency_ms)},
            {"capacity", fixed3(f.capacity)}};
  add_common_stats(j, f);
  return j;
}

void add_last_error(json& j, const thrift::TopologyInfo& info, const std::string& component,
                    const LogLinks& links) {
  const thrift::ErrorInfo* last = nullptr;
  for (const auto& e : info.errors) {
    if (e.component == component && (!last || e.time_ms >= last->time_ms)) last = &e;
  }
  j["lastError"] = last ? last->message : "";
  j["errorTime"] = last ? json(last->time_ms) : json(nullptr);
  j["errorHost"] = last ? last->host : "";
  j["errorPort"] = last ? json(last->port) : json(nullptr);
  j["errorLapsedSecs"] = last ? json(std::max<std::int64_t>(0, (now_ms() - last->time_ms) / 1000))
                              : json(nullptr);
  j["errorWorkerLogLink"] = last ? links.link_by_host(last->host, info.summary.id, last->port) : "";
}

json stall_json(const thrift::TopologySummary& s) {
  if (!s.__isset.stall) return nullptr;
  return {{"stalledSecs", s.stall.stalled_secs},
          {"pending", s.stall.pending},
          {"stalledSpouts", s.stall.stalled_spouts},
          {"fullQueues", s.stall.full_queues},
          {"queued", s.stall.queued}};
}

json failing_json(const thrift::TopologySummary& s) {
  json out = json::array();
  if (!s.__isset.failing_workers) return out;
  for (const auto& f : s.failing_workers) {
    out.push_back({{"host", f.host},
                   {"port", f.slot.port},
                   {"supervisorId", f.slot.node_id},
                   {"reason", f.reason},
                   {"exitStatus", f.exit_status},
                   {"restarts", f.restarts},
                   {"runningSince", f.__isset.running_since_ms ? json(f.running_since_ms) : json()}});
  }
  return out;
}

json topology_summary_json(const thrift::TopologySummary& t) {
  return {{"id", t.id},
          {"encodedId", url_encode(t.id)},
          {"name", t.name},
          {"status", status_name(t.status)},
          {"statusReason", t.status_reason},
          {"uptime", pretty_duration(t.uptime_secs)},
          {"uptimeSeconds", t.uptime_secs},
          {"tasksTotal", t.num_tasks},
          {"workersTotal", t.num_workers},
          {"executorsTotal", t.num_executors},
          {"requestedTotalMem", round2(t.requested_memory_mb)},
          {"requestedCpu", round2(t.requested_cpu)},
          {"assignedTotalMem", round2(t.assigned_memory_mb)},
          {"assignedCpu", round2(t.assigned_cpu)},
          {"assignmentVersion", t.assignment_version},
          {"schedulerInfo", t.status == thrift::TopologyStatus::UNSCHEDULABLE ? t.status_reason : ""}};
}

Result<std::int64_t> parse_window(const HttpRequest& request) {
  const std::string w = request.param("window", std::to_string(kDefaultWindow));
  if (w == ":all-time" || w == "all-time") return std::int64_t{0};
  for (std::int64_t known : kWindows) {
    if (known > 0 && w == std::to_string(known)) return known;
  }
  return Status(ErrorCode::kInvalidArgument,
                "window '" + w + "' is not one of 600, 10800, 86400, :all-time");
}

}  // namespace

UiApi::UiApi(UiBackend& backend, UiOptions options)
    : backend_(backend), options_(std::move(options)) {}

std::shared_ptr<UiBackend> UiApi::backend_for(const HttpRequest& request) {
  if (!options_.act_for_users || request.principal.empty()) return nullptr;
  return backend_.acting_for(request.principal);
}

HttpResponse UiApi::handle(const HttpRequest& request) {
  try {
    return route(request);
  } catch (const std::exception& e) {
    return HttpResponse::json_error(500, std::string("rstorm-ui failed: ") + e.what());
  }
}

HttpResponse UiApi::route(const HttpRequest& request) {
  const std::vector<std::string> parts = split_path(request.target.empty() ? request.path : request.target);
  const bool api = parts.size() >= 2 && parts[0] == "api" && parts[1] == "v1";
  if (!api) {
    if (request.method != "GET" && request.method != "HEAD") {
      return HttpResponse::json_error(405, request.method + " " + request.path +
                                               ": pages are read with GET");
    }
    const std::string name = parts.empty() ? "index.html" : request.path.substr(1);
    const UiAsset* asset = find_ui_asset(name);
    if (!asset) return HttpResponse::json_error(404, "no such page: " + request.path);
    HttpResponse r = HttpResponse::text(std::string(asset->body), std::string(asset->content_type));
    r.headers.emplace_back("Content-Security-Policy",
                           "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
                           "frame-ancestors 'none'");
    return r;
  }
  const std::vector<std::string> rest(parts.begin() + 2, parts.end());
  const std::shared_ptr<UiBackend> acting = backend_for(request);
  UiBackend& backend = acting ? *acting : backend_;
  // The actions (POST only): topology/{id}/activate, deactivate,
  // rebalance[/wait], kill[/wait]. Any other topology path is read (GET).
  const bool action =
      rest.size() >= 3 && rest[0] == "topology" &&
      (rest[2] == "activate" || rest[2] == "deactivate" || rest[2] == "rebalance" ||
       rest[2] == "kill");
  const auto wrong_method = [&](const char* allow, const std::string& why) {
    HttpResponse r = HttpResponse::json_error(405, request.method + " " + request.path + ": " + why);
    r.headers.emplace_back("Allow", allow);
    return r;
  };
  if (request.method == "GET" || request.method == "HEAD") {
    if (action) {
      return wrong_method("POST", "an action takes POST, with the header X-Requested-By");
    }
    return get(request, rest, backend);
  }
  if (request.method == "POST" && !action && !rest.empty() && rest[0] == "topology") {
    return wrong_method("GET, HEAD",
                        "this path is read with GET; the actions are POST "
                        "/api/v1/topology/{id}/activate, deactivate, rebalance/{wait} and "
                        "kill/{wait}");
  }
  if (request.method == "POST") {
    // Cross-site requests: a custom header (a form or a simple fetch from
    // another site cannot send one without a CORS preflight, which this
    // server never grants) and, when the browser says where it comes from,
    // that origin must be this UI (or one configured).
    if (request.header("x-requested-by").empty()) {
      return HttpResponse::json_error(
          403, "POST " + request.path +
                   " needs the header X-Requested-By (any value), e.g. curl -X POST -H "
                   "'X-Requested-By: me' ...; it protects against cross-site requests");
    }
    const std::string origin = request.header("origin");
    const std::string own = (request.secure ? "https://" : "http://") + request.header("host");
    if (!origin.empty() && origin != own && !options_.allowed_origins.count(origin)) {
      return HttpResponse::json_error(403,
                                      "POST " + request.path + " from origin '" + origin +
                                          "' refused: only this UI's own origin (" + own +
                                          ") or one listed in ui.origins may change topologies");
    }
    return post(request, rest, backend);
  }
  return wrong_method("GET, HEAD, POST", "the API answers GET and POST");
}

std::optional<WindowStats> UiApi::stats(const thrift::TopologyInfo& info, std::int64_t window_secs) {
  const std::string& id = info.summary.id;
  if (!history_.has(id) && !info.executors.empty()) {
    history_.record(id, sample_topology(info, options_.metrics_port_offset,
                                        [this](const std::string& h, int p) {
                                          return backend_.scrape(h, p);
                                        }));
  }
  return history_.window(id, window_secs, info.summary.uptime_secs);
}

Result<std::string> scrape_worker_metrics(const std::string& host, int port,
                                          metrics::HttpClientOptions client,
                                          std::chrono::milliseconds timeout) {
  client.timeout = timeout;
  auto r = metrics::http_get(host, port, "/metrics", client);
  if (!r) return Status(ErrorCode::kUnavailable, r.status().message());
  if (r->status != 200) {
    return Status(ErrorCode::kUnavailable, (client.https ? "https://" : "http://") + host + ":" +
                                               std::to_string(port) + "/metrics answered " +
                                               std::to_string(r->status));
  }
  return std::move(r->body);
}

UiSampler::UiSampler(UiApi& api, std::chrono::milliseconds interval)
    : thread_([this, &api, interval] {
        std::unique_lock lock(mutex_);
        while (!stopping_) {
          lock.unlock();
          api.sample_all();
          lock.lock();
          wake_.wait_for(lock, interval, [this] { return stopping_; });
        }
      }) {}

UiSampler::~UiSampler() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void UiApi::sample_all() {
  auto cluster = backend_.cluster_info();
  if (!cluster) return;
  std::set<std::string> live;
  for (const auto& t : cluster->topologies) {
    live.insert(t.id);
    if (t.status == thrift::TopologyStatus::KILLED ||
        t.status == thrift::TopologyStatus::UNSCHEDULABLE) {
      continue;
    }
    auto info = backend_.topology_info(t.id);
    if (!info || info->executors.empty()) continue;
    history_.record(t.id, sample_topology(*info, options_.metrics_port_offset,
                                          [this](const std::string& h, int p) {
                                            return backend_.scrape(h, p);
                                          }));
  }
  history_.retain(live);
}

HttpResponse UiApi::get(const HttpRequest& request, const std::vector<std::string>& p,
                        UiBackend& backend) {
  const bool acting = &backend != &backend_;
  auto is = [&](std::initializer_list<const char*> want) {
    if (p.size() != want.size()) return false;
    std::size_t i = 0;
    for (const char* w : want) {
      if (std::string(w) != "*" && p[i] != w) return false;
      ++i;
    }
    return true;
  };
  if (is({"cluster", "summary"}) || is({"cluster", "configuration"}) ||
      is({"supervisor", "summary"}) || is({"nimbus", "summary"}) || is({"topology", "summary"})) {
    auto cluster = backend.cluster_info();
    if (!cluster) return error_of(cluster.status(), acting);
    if (p[0] == "cluster" && p[1] == "summary") {
      double total_mem = 0, total_cpu = 0, used_mem = 0, used_cpu = 0;
      int slots = 0, used_slots = 0, executors = 0, tasks = 0;
      for (const auto& s : cluster->supervisors) {
        total_mem += s.info.memory_capacity_mb;
        total_cpu += s.info.cpu_capacity;
        used_mem += s.used_memory_mb;
        used_cpu += s.used_cpu;
        slots += static_cast<int>(s.info.slots.size());
        used_slots += s.num_used_workers;
      }
      for (const auto& t : cluster->topologies) {
        executors += t.num_executors;
        tasks += t.num_tasks;
      }
      json j = {{"stormVersion", options_.version},
                {"rstormVersion", options_.version},
                {"supervisors", cluster->supervisors.size()},
                {"topologies", cluster->topologies.size()},
                {"slotsTotal", slots},
                {"slotsUsed", used_slots},
                {"slotsFree", slots - used_slots},
                {"executorsTotal", executors},
                {"tasksTotal", tasks},
                {"totalMem", round2(total_mem)},
                {"totalCpu", round2(total_cpu)},
                {"availMem", round2(total_mem - used_mem)},
                {"availCpu", round2(total_cpu - used_cpu)},
                {"memAssignedPercentUtil", round2(total_mem > 0 ? 100 * used_mem / total_mem : 0)},
                {"cpuAssignedPercentUtil", round2(total_cpu > 0 ? 100 * used_cpu / total_cpu : 0)}};
      return HttpResponse::json(j.dump());
    }
    if (p[0] == "cluster") {
      json config = json::object();
      for (const auto& [key, yaml] : options_.configuration) config[key] = config_value(yaml);
      return HttpResponse::json(config.dump());
    }
    if (p[0] == "supervisor") {
      json list = json::array();
      for (const auto& s : cluster->supervisors) {
        const int slots = static_cast<int>(s.info.slots.size());
        list.push_back({{"id", s.info.id},
                        {"host", s.info.host},
                        {"rack", s.info.rack},
                        {"uptime", pretty_duration(s.uptime_secs)},
                        {"uptimeSeconds", s.uptime_secs},
                        {"slotsTotal", slots},
                        {"slotsUsed", s.num_used_workers},
                        {"slotsFree", slots - s.num_used_workers},
                        {"totalMem", round2(s.info.memory_capacity_mb)},
                        {"usedMem", round2(s.used_memory_mb)},
                        {"totalCpu", round2(s.info.cpu_capacity)},
                        {"usedCpu", round2(s.used_cpu)},
                        {"version", s.info.version},
                        {"logviewerPort", s.info.__isset.logviewer_port ? s.info.logviewer_port : -1},
                        {"genericResources", s.info.generic_resources}});
      }
      return HttpResponse::json(json{{"supervisors", list}, {"schedulerDisplayResource", true}}.dump());
    }
    if (p[0] == "nimbus") {
      json list = json::array();
      for (const auto& n : cluster->nimbuses) {
        list.push_back({{"host", n.host},
                        {"port", n.port},
                        {"status", n.is_leader ? "Leader" : "Not a Leader"},
                        {"version", n.version},
                        {"nimbusUpTime", pretty_duration(n.uptime_secs)},
                        {"nimbusUpTimeSeconds", n.uptime_secs}});
      }
      return HttpResponse::json(json{{"nimbuses", list}}.dump());
    }
    json list = json::array();
    for (const auto& t : cluster->topologies) list.push_back(topology_summary_json(t));
    return HttpResponse::json(json{{"topologies", list}}.dump());
  }

  // topology/{id}[/...] and topology-workers/{id}
  if (p.size() >= 2 && (p[0] == "topology" || p[0] == "topology-workers")) {
    auto window = parse_window(request);
    if (!window) return error_of(window.status(), acting);
    auto info = backend.topology_info(p[1]);
    if (!info) return error_of(info.status(), acting);
    const std::string& id = info->summary.id;
    auto cluster = backend.cluster_info();
    const LogLinks links(cluster.is_ok() ? &*cluster : nullptr);

    if (p[0] == "topology-workers" && p.size() == 2) {
      std::set<std::tuple<std::string, int, std::string>> workers;
      for (const auto& e : info->executors) workers.insert({e.host, e.slot.port, e.slot.node_id});
      json list = json::array();
      for (const auto& [host, port, node] : workers) {
        auto v = links.viewers.find(node);
        list.push_back({{"host", host},
                        {"port", port},
                        {"supervisorId", node},
                        {"logviewerPort", v == links.viewers.end() ? -1 : v->second.port},
                        {"workerLogLink", links.link(node, id, port)}});
      }
      return HttpResponse::json(json{{"hostPortList", list}}.dump());
    }
    if (p[0] != "topology") return HttpResponse::json_error(404, "no such path: " + request.path);

    if (p.size() == 2) {
      const auto w = stats(*info, *window);
      json j = topology_summary_json(info->summary);
      j["msgTimeout"] = message_timeout(*info);
      j["window"] = window_name(*window);
      j["windowHint"] = window_pretty(*window);
      j["windowSeconds"] = w ? std::llround(w->seconds) : 0;
      json topology_stats = json::array();
      for (std::int64_t each : kWindows) {
        const auto ws = stats(*info, each);
        // As Storm's: emitted and transferred by every component, acked,
        // failed and complete latency of the spouts' trees.
        Figures total;
        for (const auto& c : info->structure.components) {
          const bool spout = c.kind == thrift::ComponentKind::SPOUT;
          const Figures f = component_figures(ws ? &*ws : nullptr, c.id, spout);
          total.emitted += f.emitted;
          total.transferred += f.transferred;
          if (!spout) continue;
          total.acked += f.acked;
          total.failed += f.failed;
          total.complete_latency_ms = std::max(total.complete_latency_ms, f.complete_latency_ms);
        }
        topology_stats.push_back({{"window", window_name(each)},
                                  {"windowPretty", window_pretty(each)},
                                  {"windowSeconds", ws ? std::llround(ws->seconds) : 0},
                                  {"emitted", static_cast<std::int64_t>(total.emitted)},
                                  {"transferred", static_cast<std::int64_t>(total.transferred)},
                                  {"acked", static_cast<std::int64_t>(total.acked)},
                                  {"failed", static_cast<std::int64_t>(total.failed)},
                                  {"completeLatency", fixed3(total.complete_latency_ms)}});
      }
      j["topologyStats"] = topology_stats;
      json spouts = json::array(), bolts = json::array();
      for (const auto& c : info->structure.components) {
        const bool spout = c.kind == thrift::ComponentKind::SPOUT;
        const Figures f = component_figures(w ? &*w : nullptr, c.id, spout);
        json one = spout ? spout_json(c, f) : bolt_json(c, f);
        add_last_error(one, *info, c.id, links);
        (spout ? spouts : bolts).push_back(std::move(one));
      }
      j["spouts"] = spouts;
      j["bolts"] = bolts;
      json config = json::object();
      for (const auto& [key, entry] : info->config) config[key] = config_value(entry.value_yaml);
      j["configuration"] = config;
      j["stall"] = stall_json(info->summary);
      j["failingWorkers"] = failing_json(info->summary);
      json errors = json::array();
      std::vector<thrift::ErrorInfo> sorted = info->errors;
      std::sort(sorted.begin(), sorted.end(),
                [](const auto& a, const auto& b) { return a.time_ms > b.time_ms; });
      for (const auto& e : sorted) errors.push_back(error_json(e, links, id, now_ms()));
      j["errors"] = errors;
      j["metricsUnreachable"] = w ? json(w->latest.unreachable) : json::array();
      return HttpResponse::json(j.dump());
    }

    if (p.size() == 3 && p[2] == "visualization") {
      const auto w = stats(*info, kDefaultWindow);
      json out = json::object();
      for (const auto& c : info->structure.components) {
        const bool spout = c.kind == thrift::ComponentKind::SPOUT;
        const Figures f = component_figures(w ? &*w : nullptr, c.id, spout);
        json inputs = json::array();
        for (const auto& in : c.inputs) {
          inputs.push_back({{":component", in.component},
                            {":stream", in.stream},
                            {":sani-stream", url_encode(in.stream)},
                            {":grouping", grouping_name(in.grouping)}});
        }
        out[c.id] = {{":type", spout ? "spout" : "bolt"},
                     {":capacity", spout ? 0.0 : f.capacity},
                     {":latency", spout ? f.complete_latency_ms : f.execute_latency_ms},
                     {":transferred", static_cast<std::int64_t>(f.transferred)},
                     {":backpressure", backpressure_level(f.backpressured)},
                     {":backpressuredShare", round2(f.backpressured)},
                     {":busyShare", round2(f.busy)},
                     {":executors", c.parallelism},
                     {":inputs", inputs}};
      }
      return HttpResponse::json(out.dump());
    }

    if (p.size() == 3 && p[2] == "placement") {
      auto placement = backend.placement(id);
      if (!placement) return error_of(placement.status(), acting);
      json j = {{"topologyId", id},
                {"scheduler", placement->scheduler},
                {"warnings", placement->warnings},
                {"networkCost",
                 {{"sameWorker", placement->network.same_worker},
                  {"sameNode", placement->network.same_node},
                  {"sameRack", placement->network.same_rack},
                  {"crossRack", placement->network.cross_rack}}},
                {"requested",
                 {{"memory", round2(info->summary.requested_memory_mb)},
                  {"cpu", round2(info->summary.requested_cpu)}}},
                {"assigned",
                 {{"memory", round2(info->summary.assigned_memory_mb)},
                  {"cpu", round2(info->summary.assigned_cpu)}}},
                {"unschedulable", info->summary.status == thrift::TopologyStatus::UNSCHEDULABLE
                                      ? json(info->summary.status_reason)
                                      : json(nullptr)}};
      // rack -> node -> port -> executors
      struct Worker {
        double memory = 0, cpu = 0;
        json executors = json::array();
      };
      std::map<std::string, std::map<int, Worker>> workers;  // node -> port -> worker
      std::map<std::string, std::string> address_node;       // "host:port" -> node
      // Each worker's own acker (topology.acker.executors unset), counted
      // in its use as nimbus counts it.
      double acker_memory = 0, acker_cpu = 0;
      if (placement->__isset.worker_acker) {
        acker_memory = placement->worker_acker.onheap_mb + placement->worker_acker.offheap_mb;
        acker_cpu = placement->worker_acker.cpu_pcore_percent;
      }
      for (const auto& e : placement->assignment.executors) {
        const double mem = e.resources.onheap_mb + e.resources.offheap_mb;
        auto [at, added] = workers[e.slot.node_id].try_emplace(e.slot.port);
        Worker& wk = at->second;
        if (added) {
          wk.memory = acker_memory;
          wk.cpu = acker_cpu;
        }
        wk.memory += mem;
        wk.cpu += e.resources.cpu_pcore_percent;
        wk.executors.push_back({{"id", "[" + std::to_string(e.executor.task_start) + "-" +
                                           std::to_string(e.executor.task_end) + "]"},
                                {"component", e.executor.component},
                                {"memory", round2(mem)},
                                {"cpu", round2(e.resources.cpu_pcore_percent)}});
        auto host = placement->assignment.node_hosts.find(e.slot.node_id);
        if (host != placement->assignment.node_hosts.end()) {
          address_node[host->second + ":" + std::to_string(e.slot.port)] = e.slot.node_id;
        }
      }
      std::map<std::string, json> racks;
      for (const auto& n : placement->nodes) {
        double mem = 0, cpu = 0;
        json wl = json::array();
        for (auto& [port, wk] : workers[n.node_id]) {
          mem += wk.memory;
          cpu += wk.cpu;
          wl.push_back({{"port", port},
                        {"memory", round2(wk.memory)},
                        {"cpu", round2(wk.cpu)},
                        {"acker", placement->__isset.worker_acker
                                      ? json{{"memory", round2(acker_memory)},
                                             {"cpu", round2(acker_cpu)}}
                                      : json(nullptr)},
                        {"workerLogLink", links.link(n.node_id, id, port)},
                        {"executors", wk.executors}});
        }
        racks[n.rack].push_back({{"id", n.node_id},
                                 {"host", n.host},
                                 {"memoryCapacity", round2(n.memory_capacity_mb)},
                                 {"memoryUsed", round2(n.memory_used_mb)},
                                 {"cpuCapacity", round2(n.cpu_capacity)},
                                 {"cpuUsed", round2(n.cpu_used)},
                                 {"memoryTopology", round2(mem)},
                                 {"cpuTopology", round2(cpu)},
                                 {"workers", wl}});
      }
      json rack_list = json::array();
      for (auto& [rack, nodes] : racks) rack_list.push_back({{"rack", rack}, {"nodes", nodes}});
      j["racks"] = rack_list;
      // Measured traffic between nodes (and between workers) over the last 10 minutes.
      const auto w = stats(*info, kDefaultWindow);
      std::map<std::pair<std::string, std::string>, double> node_traffic;
      json worker_traffic = json::array();
      if (w) {
        for (const auto& [key, sent] : w->counts.peer_sent) {
          if (sent <= 0) continue;
          worker_traffic.push_back(
              {{"from", key.first}, {"to", key.second}, {"tuples", static_cast<std::int64_t>(sent)}});
          auto from = address_node.find(key.first);
          auto to = address_node.find(key.second);
          if (from == address_node.end() || to == address_node.end() || from->second == to->second)
            continue;
          node_traffic[{from->second, to->second}] += sent;
        }
      }
      json traffic = json::array();
      for (const auto& [key, sent] : node_traffic) {
        traffic.push_back({{"from", key.first}, {"to", key.second}, {"tuples", static_cast<std::int64_t>(sent)}});
      }
      j["traffic"] = traffic;
      j["workerTraffic"] = worker_traffic;
      j["trafficWindowSeconds"] = w ? std::llround(w->seconds) : 0;
      return HttpResponse::json(j.dump());
    }

    if (p.size() == 4 && p[2] == "component") {
      const thrift::ComponentDef* c = find_component(*info, p[3]);
      if (!c) {
        return HttpResponse::json_error(
            404, "topology '" + info->summary.name + "' has no component '" + p[3] + "'");
      }
      const bool spout = c->kind == thrift::ComponentKind::SPOUT;
      const auto w = stats(*info, *window);
      json j = {{"id", c->id},
                {"encodedId", url_encode(c->id)},
                {"name", info->summary.name},
                {"componentType", spout ? "spout" : "bolt"},
                {"topologyId", id},
                {"encodedTopologyId", url_encode(id)},
                {"topologyStatus", status_name(info->summary.status)},
                {"executors", c->parallelism},
                {"tasks", num_tasks(*c)},
                {"window", window_name(*window)},
                {"windowHint", window_pretty(*window)},
                {"windowSeconds", w ? std::llround(w->seconds) : 0}};
      json per_window = json::array();
      for (std::int64_t each : kWindows) {
        const auto ws = stats(*info, each);
        const Figures f = component_figures(ws ? &*ws : nullptr, c->id, spout);
        json one = spout ? spout_json(*c, f) : bolt_json(*c, f);
        one["window"] = window_name(each);
        one["windowPretty"] = window_pretty(each);
        per_window.push_back(std::move(one));
      }
      j[spout ? "spoutSummary" : "boltStats"] = per_window;
      double exec_avg_s = 0;
      if (w) {
        auto l = w->counts.latency.find(c->id);
        if (l != w->counts.latency.end() && l->second.execute_count > 0)
          exec_avg_s = l->second.execute_sum / l->second.execute_count;
      }
      json executors = json::array();
      for (const auto& e : info->executors) {
        if (e.executor.component != c->id) continue;
        ExecutorCounters counts, gauges;
        if (w) {
          const std::pair<std::string, int> key{c->id, e.executor.task_start};
          if (auto it = w->counts.executors.find(key); it != w->counts.executors.end()) counts = it->second;
          if (auto it = w->latest.executors.find(key); it != w->latest.executors.end()) gauges = it->second;
        }
        const std::string eid = "[" + std::to_string(e.executor.task_start) + "-" +
                                std::to_string(e.executor.task_end) + "]";
        executors.push_back(
            {{"id", eid},
             {"encodedId", url_encode(eid)},
             {"uptime", pretty_duration(e.uptime_secs)},
             {"uptimeSeconds", e.uptime_secs},
             {"host", e.host},
             {"port", e.slot.port},
             {"supervisorId", e.slot.node_id},
             {"emitted", static_cast<std::int64_t>(counts.emitted)},
             {"transferred", static_cast<std::int64_t>(counts.transferred)},
             {"acked", static_cast<std::int64_t>(counts.acked)},
             {"failed", static_cast<std::int64_t>(counts.failed)},
             {"executed", static_cast<std::int64_t>(counts.executed)},
             {"executeLatency", fixed3(1000 * exec_avg_s)},
             {"capacity", fixed3(w && w->seconds > 0 ? counts.executed * exec_avg_s / w->seconds : 0)},
             {"queueDepth", gauges.queue_depth},
             {"queueCapacity", gauges.queue_capacity},
             {"fused", gauges.fused},
             {"workerLogLink", links.link(e.slot.node_id, id, e.slot.port)}});
      }
      j["executorStats"] = executors;
      json inputs = json::array(), outputs = json::array();
      for (const auto& in : c->inputs) {
        inputs.push_back({{"component", in.component}, {"stream", in.stream}, {"grouping", grouping_name(in.grouping)}});
      }
      for (const auto& s : c->streams) outputs.push_back({{"stream", s.name}, {"fields", s.fields}});
      j["inputs"] = inputs;
      j["outputs"] = outputs;
      json errors = json::array();
      for (const auto& e : info->errors) {
        if (e.component == c->id) errors.push_back(error_json(e, links, id, now_ms()));
      }
      j["componentErrors"] = errors;
      json user = json::array();
      if (w) {
        for (const auto& m : w->latest.user) {
          if (m.component != c->id) continue;
          user.push_back({{"name", m.name}, {"type", m.type}, {"task", m.task}, {"value", m.value},
                          {"sum", m.sum}, {"count", m.count}});
        }
      }
      j["userMetrics"] = user;
      return HttpResponse::json(j.dump());
    }
  }
  return HttpResponse::json_error(404, "no such path: " + request.path);
}

HttpResponse UiApi::post(const HttpRequest& request, const std::vector<std::string>& p,
                         UiBackend& backend) {
  const bool acting = &backend != &backend_;
  if (p.size() < 3 || p[0] != "topology") {
    return HttpResponse::json_error(404, "no such action: POST " + request.path);
  }
  // The id (or name) to its name. A caller who may not even describe the
  // topology is told by the action itself what they may not do.
  auto info = backend.topology_info(p[1]);
  if (!info && info.code() != ErrorCode::kPermissionDenied) return error_of(info.status(), acting);
  const std::string name = info ? info->summary.name : p[1];
  const std::string id = info ? info->summary.id : p[1];
  const std::string& op = p[2];
  auto wait_of = [&](std::size_t index) -> Result<std::optional<int>> {
    if (p.size() <= index) return std::optional<int>();
    try {
      std::size_t used = 0;
      const int v = std::stoi(p[index], &used);
      if (used != p[index].size() || v < 0) throw std::invalid_argument(p[index]);
      return std::optional<int>(v);
    } catch (const std::exception&) {
      return Status(ErrorCode::kInvalidArgument,
                    "wait time '" + p[index] + "' is not a number of seconds");
    }
  };
  Status done;
  if (op == "activate" && p.size() == 3) {
    done = backend.activate(name);
  } else if (op == "deactivate" && p.size() == 3) {
    done = backend.deactivate(name);
  } else if (op == "kill" && p.size() <= 4) {
    auto wait = wait_of(3);
    if (!wait) return error_of(wait.status(), acting);
    done = backend.kill(name, *wait);
  } else if (op == "rebalance" && p.size() <= 4) {
    auto wait = wait_of(3);
    if (!wait) return error_of(wait.status(), acting);
    thrift::RebalanceOptions options;
    if (*wait) options.__set_wait_secs(**wait);
    if (!request.body.empty()) {
      json body = json::parse(request.body, nullptr, false);
      if (body.is_discarded() || !body.is_object()) {
        return HttpResponse::json_error(400, "the rebalance body is not a JSON object");
      }
      const json o = body.value("rebalanceOptions", json::object());
      if (o.contains("numWorkers")) {
        if (!o["numWorkers"].is_number_integer() || o["numWorkers"].get<int>() < 1) {
          return HttpResponse::json_error(400, "rebalanceOptions.numWorkers must be a positive integer");
        }
        options.__set_num_workers(o["numWorkers"].get<int>());
      }
      if (o.contains("executors")) {
        if (!o["executors"].is_object()) {
          return HttpResponse::json_error(400, "rebalanceOptions.executors must map components to executors");
        }
        std::map<std::string, int> executors;
        for (const auto& [component, n] : o["executors"].items()) {
          if (!n.is_number_integer() || n.get<int>() < 1) {
            return HttpResponse::json_error(
                400, "rebalanceOptions.executors." + component + " must be a positive integer");
          }
          executors[component] = n.get<int>();
        }
        options.__set_num_executors(executors);
      }
    }
    done = backend.rebalance(name, options);
  } else {
    return HttpResponse::json_error(404, "no such action: POST " + request.path +
                                             " (activate, deactivate, rebalance/{wait}, kill/{wait})");
  }
  if (!done) return error_of(done, acting);
  return HttpResponse::json(
      json{{"topologyOperation", op}, {"topologyId", id}, {"status", "success"}}.dump());
}

}  // namespace rstorm::ui
