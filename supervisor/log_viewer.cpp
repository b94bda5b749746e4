#include "supervisor/log_viewer.hpp"

#include <fstream>

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

}  // namespace

LogViewer::LogViewer(fs::path workers_dir) : root_(std::move(workers_dir)) {}

HttpResponse LogViewer::handle(const HttpRequest& request) const {
  if (request.method != "GET" && request.method != "HEAD") {
    return HttpResponse::json_error(405, request.method + " " + request.path +
                                             ": the log viewer only answers GET");
  }
  std::error_code ec;
  const fs::path root = fs::weakly_canonical(root_, ec);
  if (request.path == "/api/v1/logs") {
    nlohmann::json files = nlohmann::json::array();
    if (fs::is_directory(root, ec)) {
      for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::end(it);
           it.increment(ec)) {
        if (it->is_regular_file(ec) && it->path().extension() == ".log") {
          files.push_back(fs::relative(it->path(), root, ec).generic_string());
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
