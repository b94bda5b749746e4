// NimbusLink: the three Nimbus RPCs a supervisor makes (code download,
// topology info, supervisor heartbeat), behind one interface so that the
// supervisor library can be driven in tests without a nimbus process.
// The daemon uses NimbusClientLink (nimbus_client_link.hpp) over nimbus's
// Thrift client. Implementations are thread-safe.
#pragma once

#include <string>

#include "common/status.hpp"
#include "rstorm_thrift/rstorm_types.h"

namespace rstorm::supervisor {

class NimbusLink {
 public:
  virtual ~NimbusLink() = default;
  // The blob's bytes (beginFileDownload/downloadChunk). kNotFound, kUnavailable.
  virtual Result<std::string> download_blob(const std::string& blob_key) = 0;
  // getTopologyInfo: name, structure and config of a topology.
  virtual Result<thrift::TopologyInfo> topology_info(const std::string& topology_id) = 0;
  virtual Status supervisor_heartbeat(const thrift::SupervisorHeartbeat& heartbeat) = 0;
  // Where a worker finds nimbus ("host:port", the TLS ports when `tls`):
  // given to workers as nimbus.seeds. Empty when unknown.
  virtual std::vector<std::string> nimbus_seeds(bool /*tls*/) const { return {}; }
};

}  // namespace rstorm::supervisor
