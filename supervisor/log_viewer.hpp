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
// With an authorizer that is on (nimbus.authorizer: simple-acl in the
// supervisor's config), a log is served only to a user who may describe its
// topology, as nimbus decides that (the owner, topology.users,
// topology.readonly.users and their groups, nimbus.admins, the daemons):
// the client certificate's principal (HTTPS with client authentication),
// mapped by storm.principal.tolocal.rules, against the ACL the supervisor
// wrote beside the log (kAclFile). A log without one is served to admins and
// daemons only; /api/v1/logs lists only what the user may read.
//
// Thread contract: thread-safe (the HTTP server's threads call it).
#pragma once

#include <filesystem>
#include <memory>

#include "common/http/http_server.hpp"
#include "common/security/authorizer.hpp"

namespace rstorm::supervisor {

// A worker folder's ACL, written by the supervisor (0600) when it writes the
// worker's spec: the topology's name, id, owner and ACL keys, as JSON.
inline constexpr char kAclFile[] = "acl.json";
std::string acl_to_json(const security::TopologyAcl& acl);
// kCorruption naming the file when it is not such JSON; kNotFound when absent.
Result<security::TopologyAcl> read_acl_file(const std::filesystem::path& path);

class LogViewer {
 public:
  // `authorizer`: null or off, every client that reaches the port is served.
  explicit LogViewer(std::filesystem::path workers_dir,
                     std::shared_ptr<const security::Authorizer> authorizer = nullptr,
                     security::PrincipalMapper principals = {});
  http::HttpResponse handle(const http::HttpRequest& request) const;

 private:
  // OK when the request's user may read the logs of worker folder `folder`
  // (the first part of a path under the root); kPermissionDenied naming the
  // user and the topology otherwise.
  Status may_read(const http::HttpRequest& request, const std::string& folder,
                  const std::filesystem::path& root) const;

  const std::filesystem::path root_;
  const std::shared_ptr<const security::Authorizer> authorizer_;
  const security::PrincipalMapper principals_;
};

}  // namespace rstorm::supervisor
