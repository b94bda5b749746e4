// Calls to nimbus's port that fuzz_nimbus_rpc found faults with, sent over a
// real connection to a real NimbusServer (tests/nimbus/nimbus_fixture.hpp).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/fuzz/regression_input.hpp"
#include "tests/nimbus/nimbus_fixture.hpp"

namespace rstorm::fuzz {
namespace {

// The process's peak resident memory so far, in MB (nimbus runs in-process).
long peak_rss_mb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024;
}

// `call` with the big-endian 32-bit length at `offset` replaced by `length`.
// The fuzzer's inputs claim more than a test machine could allocate, so that
// an unbounded server would fail to allocate and survive; a claim it can
// allocate shows whether the server allocates it.
std::string claiming(std::string call, std::size_t offset, std::uint32_t length) {
  for (std::size_t i = 0; i < 4; ++i) call[offset + i] = static_cast<char>(length >> (24 - 8 * i));
  return call;
}

class FuzzNimbusRpc : public nimbus::testing::NimbusFixture {
 protected:
  // Sends `call` as one frame on a new connection; true once nimbus has closed
  // it (what it does with a call it cannot read), false after 30 s.
  bool closed_after_sending(const std::string& call) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(server_->port()));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    timeval timeout{30, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    std::string frame(4, '\0');
    for (int i = 0; i < 4; ++i) frame[i] = static_cast<char>(call.size() >> (24 - 8 * i));
    frame += call;
    bool closed = false;
    if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
        ::send(fd, frame.data(), frame.size(), 0) == static_cast<ssize_t>(frame.size())) {
      char reply[256];
      ssize_t got;
      while ((got = ::recv(fd, reply, sizeof reply, 0)) > 0) {
      }
      closed = got == 0;
    }
    ::close(fd);
    return closed;
  }
};

// A 67-byte call whose method name claims 1.9 GB (here 512 MB): nimbus sized
// the string before reading it.
TEST_F(FuzzNimbusRpc, CallClaimingAHugeMethodNameAllocatesNothingAndNimbusServesOn) {
  const std::string call =
      testing::regression_input("fuzz_nimbus_rpc", "2gb-method-name", testing::Selector::kKeep);
  const long before = peak_rss_mb();
  EXPECT_TRUE(closed_after_sending(claiming(call, 4, 512u << 20)));
  EXPECT_LT(peak_rss_mb() - before, 256);
  EXPECT_TRUE(client_->leader().is_ok());
}

// A supervisor heartbeat whose list of full queues claims 250 million strings
// (here 32 million, 1 GB): nimbus sized the list before reading an element.
TEST_F(FuzzNimbusRpc, HeartbeatClaimingAHugeListAllocatesNothingAndNimbusServesOn) {
  const std::string call =
      testing::regression_input("fuzz_nimbus_rpc", "250m-strings", testing::Selector::kKeep);
  const long before = peak_rss_mb();
  EXPECT_TRUE(closed_after_sending(claiming(call, 0x1e7, 32u << 20)));
  EXPECT_LT(peak_rss_mb() - before, 256);
  EXPECT_TRUE(client_->leader().is_ok());
}

}  // namespace
}  // namespace rstorm::fuzz
