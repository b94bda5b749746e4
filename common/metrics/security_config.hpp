// The storm.metrics.tls.* and storm.metrics.auth.* keys: how a daemon guards
// its /metrics endpoint, and how rstorm's own scrapers (rstorm-ui) reach
// endpoints guarded that way. All null (the defaults): plain HTTP, no
// authentication.
//
//   storm.metrics.tls.cert.path      PEM certificate (leaf first); with key.path: HTTPS
//   storm.metrics.tls.key.path       its unencrypted PEM private key
//   storm.metrics.tls.ca.path        PEM CA bundle the certificates chain to (scrapers)
//   storm.metrics.auth.user          basic authentication user (no ':')
//   storm.metrics.auth.password.file file holding the password (surrounding
//                                    whitespace dropped, as Prometheus's password_file)
//
// The password is a file, not a key, because storm.metrics.* entries travel:
// supervisors pass them to workers and rstorm-ui shows its configuration.
//
// Thread contract: free functions, safe from any thread.
#pragma once

#include "common/metrics/exposer.hpp"
#include "common/metrics/http_get.hpp"
#include "rstorm/config.hpp"

namespace rstorm::metrics {

// A daemon's endpoint. Throws ConfigError naming the key: a wrong type, one
// of cert.path/key.path or of auth.user/auth.password.file without the other,
// a file that cannot be read, an empty password or a user with ':'.
ServerSecurity server_security_from_config(const Config& config);

// rstorm's scrapers: HTTPS when storm.metrics.tls.cert.path is set, checked
// against storm.metrics.tls.ca.path (null: the system's trust store), with the
// basic authentication credentials. Throws ConfigError as above; the
// certificate and key files need not be on this machine.
HttpClientOptions scrape_client_from_config(const Config& config);

}  // namespace rstorm::metrics
