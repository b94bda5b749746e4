// LogViewer: each supervisor serves its workers' logs over HTTP (Storm's
// logviewer), so that the UI can link an executor or an error to the log of the
// worker that ran it. Files are confined to `<storm.local.dir>/workers`: a
// path that is absolute, names `..`, or resolves (through a symbolic link)
// outside that folder is refused with 403 naming the path.
//
//   GET /api/v1/logs                              -> {"files": ["<topology>-<port>/worker.log", ...]}
//   GET /api/v1/log?file=F&start=S&length=L       -> {"file", "start", "length", "size", "content"}
//   GET /log?file=F&start=S&length=L              -> the same as an HTML page with paging links
// `start` defaults to the last `length` bytes; `length` defaults to 51200 (as
// Storm's logviewer) and is at most 1 MiB.
//
// Thread contract: thread-safe (the HTTP server's threads call it).
#pragma once

#include <filesystem>
#include <memory>

#include "common/http/http_server.hpp"

namespace rstorm::supervisor {

class LogViewer {
 public:
  explicit LogViewer(std::filesystem::path workers_dir);
  http::HttpResponse handle(const http::HttpRequest& request) const;

 private:
  const std::filesystem::path root_;
};

}  // namespace rstorm::supervisor
