#include "supervisor/log_viewer.hpp"

#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

namespace rstorm::supervisor {

namespace fs = std::filesystem;
using http::HttpRequest;
using http::HttpResponse;

namespace {

constexpr std::int64_t kDefaultLength = 51200;
constexpr std::int64_t kMaxLength = 1 << 20;

struct Slice {
  std::string file;
  std::int64_t start = 0;
  std::int64_t length = 0;
  std::int64_t size = 0;
  std::string content;
};

// Parses a non-negative integer parameter; nullopt when absent.
Result<std::optional<std::int64_t>> int_param(const HttpRequest& request, const std::string& name) {
  const std::string text = request.param(name);
  if (text.empty()) return std::optional<std::int64_t>();
  try {
    std::size_t used = 0;
    const long long v = std::stoll(text, &used);
    if (used != text.size() || v < 0) throw std::invalid_argument(text);
    return std::optional<std::int64_t>(v);
  } catch (const std::exception&) {
    return Status(ErrorCode::kInvalidArgument,
                  "parameter '" + name + "' must be a non-negative integer, not '" + text + "'");
  }
}

// What the log viewer serves of a worker folder: its logs (worker.log and
// rotated ones), never the rest (spec.json holds the topology's secret,
// worker-token the worker's credential).
bool is_log_file(const fs::path& path) { return path.extension() == ".log"; }

}  // namespace

std::string acl_to_json(const security::TopologyAcl& acl) {
  return nlohmann::json{{"name", acl.name},
                        {"id", acl.id},
                        {"owner", acl.owner},
                        {"users", acl.users},
                        {"readonly_users", acl.readonly_users},
                        {"groups", acl.groups},
                        {"readonly_groups", acl.readonly_groups}}
      .dump();
}

Result<security::TopologyAcl> read_acl_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(ErrorCode::kNotFound, "no ACL file " + path.string());
  try {
    const auto j = nlohmann::json::parse(in);
    security::TopologyAcl acl;
    acl.name = j.at("name").get<std::string>();
    acl.id = j.at("id").get<std::string>();
    acl.owner = j.at("owner").get<std::string>();
    acl.users = j.at("users").get<std::vector<std::string>>();
    acl.readonly_users = j.at("readonly_users").get<std::vector<std::string>>();
    acl.groups = j.at("groups").get<std::vector<std::string>>();
    acl.readonly_groups = j.at("readonly_groups").get<std::vector<std::string>>();
    return acl;
  } catch (const nlohmann::json::exception& e) {
    return Status(ErrorCode::kCorruption, path.string() + " is not a topology ACL: " + e.what());
  }
}

LogViewer::LogViewer(fs::path workers_dir, std::shared_ptr<const security::Authorizer> authorizer,
                     security::PrincipalMapper principals)
    : root_(std::move(workers_dir)),
      authorizer_(std::move(authorizer)),
      principals_(std::move(principals)) {}

Status LogViewer::may_read(const HttpRequest& request, const std::string& folder,
                           const fs::path& root) const {
  if (authorizer_ == nullptr || !authorizer_->enabled()) return Status::ok();
  const std::string user =
      request.principal.empty() ? std::string() : principals_.to_local(request.principal);
  auto acl = read_acl_file(root / folder / kAclFile);
  // Without its ACL a folder belongs to no topology a user may read: admins
  // and daemons only.
  security::TopologyAcl unknown;
  unknown.name = folder;
  Status s = authorizer_->check(user, security::Operation::kDescribe, acl ? &*acl : &unknown);
  if (s || !user.empty()) return s;
  return Status(ErrorCode::kPermissionDenied,
                "the log viewer serves logs only to a client certificate's user who may "
                "describe the topology (nimbus.authorizer is on)");
}

HttpResponse LogViewer::handle(const HttpRequest& request) const {
  if (request.method != "GET" && request.method != "HEAD") {
    return HttpResponse::json_error(405, request.method + " " + request.path +
                                             ": the log viewer only answers GET");
  }
  std::error_code ec;
  const fs::path root = fs::weakly_canonical(root_, ec);
  if (request.path == "/api/v1/logs") {
    nlohmann::json files = nlohmann::json::array();
    std::map<std::string, bool> readable;  // worker folder -> may_read
    if (fs::is_directory(root, ec)) {
      for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::end(it);
           it.increment(ec)) {
        if (it->is_regular_file(ec) && is_log_file(it->path())) {
          const fs::path relative = fs::relative(it->path(), root, ec);
          const std::string folder = relative.begin()->string();
          auto [at, added] = readable.try_emplace(folder, false);
          if (added) at->second = may_read(request, folder, root).is_ok();
          if (at->second) files.push_back(relative.generic_string());
        }
      }
    }
    std::sort(files.begin(), files.end());
    return HttpResponse::json(nlohmann::json{{"files", files}}.dump());
  }
  const bool html = request.path == "/log";
  if (!html && request.path != "/api/v1/log") {
    return HttpResponse::json_error(404, "no such path: " + request.path +
                                             " (the log viewer serves /log, /api/v1/log and "
                                             "/api/v1/logs)");
  }
  const std::string name = request.param("file");
  if (name.empty()) return HttpResponse::json_error(400, "parameter 'file' is required");
  const fs::path relative(name);
  bool escapes = relative.is_absolute();
  for (const auto& part : relative) escapes = escapes || part == "..";
  fs::path resolved;
  if (!escapes) {
    resolved = fs::weakly_canonical(root / relative, ec);
    const auto mismatch = std::mismatch(root.begin(), root.end(), resolved.begin(), resolved.end());
    escapes = ec || mismatch.first != root.end();
  }
  if (escapes) {
    return HttpResponse::json_error(
        403, "file '" + name + "' is outside the worker log folder " + root.string());
  }
  if (!is_log_file(relative) || !is_log_file(resolved)) {
    return HttpResponse::json_error(
        403, "file '" + name + "' is not a log: the log viewer serves only the *.log files of "
             "a worker folder");
  }
  if (Status s = may_read(request, relative.begin()->string(), root); !s) {
    return HttpResponse::json_error(403, s.message());
  }
  if (!fs::is_regular_file(resolved, ec)) {
    return HttpResponse::json_error(404, "no log file '" + name + "' in " + root.string());
  }
  auto start = int_param(request, "start");
  auto length = int_param(request, "length");
  if (!start) return HttpResponse::json_error(400, start.status().message());
  if (!length) return HttpResponse::json_error(400, length.status().message());
  Slice slice;
  slice.file = name;
  slice.size = static_cast<std::int64_t>(fs::file_size(resolved, ec));
  slice.length = std::min(length->value_or(kDefaultLength), kMaxLength);
  slice.start = start->value_or(std::max<std::int64_t>(0, slice.size - slice.length));
  slice.start = std::min(slice.start, slice.size);
  slice.length = std::min(slice.length, slice.size - slice.start);
  std::ifstream in(resolved, std::ios::binary);
  in.seekg(slice.start);
  slice.content.resize(static_cast<std::size_t>(slice.length));
  in.read(slice.content.data(), slice.length);
  slice.content.resize(static_cast<std::size_t>(in.gcount()));
  if (!html) {
    nlohmann::json out = {{"file", slice.file},
                          {"start", slice.start},
                          {"length", static_cast<std::int64_t>(slice.content.size())},
                          {"size", slice.size},
                          {"content", slice.content}};
    return HttpResponse::json(out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
  const std::int64_t len = std::min(length->value_or(kDefaultLength), kMaxLength);
  auto link = [&](const std::string& label, std::int64_t at, bool enabled) {
    if (!enabled) return "<span class=\"off\">" + label + "</span>";
    return "<a href=\"/log?file=" + http::html_escape(name) + "&amp;start=" + std::to_string(at) +
           "&amp;length=" + std::to_string(len) + "\">" + label + "</a>";
  };
  const std::string nav =
      "<p class=\"nav\">" + link("First", 0, slice.start > 0) + " " +
      link("Prev", std::max<std::int64_t>(0, slice.start - len), slice.start > 0) + " " +
      link("Next", slice.start + len, slice.start + len < slice.size) + " " +
      link("Last", std::max<std::int64_t>(0, slice.size - len), slice.start + len < slice.size) +
      " &middot; bytes " + std::to_string(slice.start) + "-" +
      std::to_string(slice.start + static_cast<std::int64_t>(slice.content.size())) + " of " +
      std::to_string(slice.size) + "</p>";
  std::string page =
      "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>" + http::html_escape(name) +
      "</title><style>body{font-family:system-ui,sans-serif;margin:1em}pre{background:#f6f8fa;"
      "padding:.8em;border:1px solid #ddd;white-space:pre-wrap;font-size:12px}.off{color:#999}"
      "</style></head><body><h3>" + http::html_escape(name) + "</h3>" + nav + "<pre id=\"log\">" +
      http::html_escape(slice.content) + "</pre>" + nav + "</body></html>";
  return HttpResponse::text(std::move(page), "text/html; charset=utf-8");
}

}  // namespace rstorm::supervisor
