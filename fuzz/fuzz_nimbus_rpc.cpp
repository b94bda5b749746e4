// Nimbus RPC calls (common/thrift/rstorm.thrift, service Nimbus): the input is
// the body of one frame a client sends to nimbus's port, read the way
// NimbusServer reads it (framed transport, binary protocol with the server's
// container limit, the generated NimbusProcessor) into a handler that keeps
// nothing. Every struct nimbus
// accepts from the network is an argument here: TopologyStructure and its
// config (submitTopology), KillOptions, RebalanceOptions, SupervisorHeartbeat
// (with SupervisorInfo and WorkerHeartbeats), chunks, sizes and names.
//
// Checks: a call that reads answers with one reply or exception message of the
// same name and sequence id; every struct argument re-encodes into bytes that
// decode to the same bytes again; a submitted config that converts with
// config_from_thrift (as nimbus does) converts back to the same rendering.
// Anything but a Thrift exception escaping the processor is a crash (the
// server would drop the connection, but it means an unchecked decode).
#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/transport/TBufferTransports.h>

#include "common/thrift/codec.hpp"
#include "fuzz/fuzz_check.hpp"
#include "nimbus/nimbus_server.hpp"
#include "rstorm_thrift/Nimbus.h"

namespace rstorm::fuzz {
namespace {

using apache::thrift::protocol::TBinaryProtocol;
using apache::thrift::transport::TFramedTransport;
using apache::thrift::transport::TMemoryBuffer;

template <typename T>
std::string binary_bytes(const T& value) {
  auto buffer = std::make_shared<TMemoryBuffer>();
  TBinaryProtocol protocol(buffer);
  value.write(&protocol);
  return buffer->getBufferAsString();
}

template <typename T>
void check_round_trip(const T& value) {
  const std::string encoded = binary_bytes(value);
  auto buffer = std::make_shared<TMemoryBuffer>(
      reinterpret_cast<std::uint8_t*>(const_cast<char*>(encoded.data())),
      static_cast<std::uint32_t>(encoded.size()), TMemoryBuffer::OBSERVE);
  TBinaryProtocol protocol(buffer);
  T again;
  again.read(&protocol);
  fuzz_check(buffer->available_read() == 0 && binary_bytes(again) == encoded,
             "an RPC argument re-encodes to the same bytes");
}

// Nimbus's view of a call: the arguments as decoded; nothing is kept.
class ArgumentChecker final : public thrift::NimbusNull {
 public:
  void submitTopology(std::string&, const std::string&, const thrift::TopologyStructure& structure,
                      const std::map<std::string, thrift::ConfigEntry>& config,
                      const std::string&) override {
    check_round_trip(structure);
    for (const auto& [key, entry] : config) check_round_trip(entry);
    auto decoded = config_from_thrift(config);
    if (!decoded) return;
    auto again = config_from_thrift(config_to_thrift(*decoded));
    fuzz_check(again.is_ok() && again->entries().size() == decoded->entries().size(),
               "a submitted config converts back");
    for (const auto& [key, entry] : decoded->entries()) {
      const Config::Entry* e = again->find(key);
      fuzz_check(e != nullptr && e->value.to_string() == entry.value.to_string() &&
                     e->value.type_name() == entry.value.type_name(),
                 "a submitted config value converts back to the same value");
    }
  }
  void killTopology(const std::string&, const thrift::KillOptions& options) override {
    check_round_trip(options);
  }
  void rebalance(const std::string&, const thrift::RebalanceOptions& options) override {
    check_round_trip(options);
  }
  void supervisorHeartbeat(const thrift::SupervisorHeartbeat& heartbeat) override {
    check_round_trip(heartbeat);
  }
};

void quiet(const char*) {}

// What NimbusServer reads a connection with: framed, binary, its limits,
// non-strict reads, strict writes.
std::shared_ptr<TBinaryProtocol> server_protocol(std::shared_ptr<TMemoryBuffer> bytes) {
  const nimbus::NimbusServer::Options server;
  return std::make_shared<TBinaryProtocol>(std::make_shared<TFramedTransport>(std::move(bytes)),
                                           server.max_frame_bytes, server.max_container_elements,
                                           false, true);
}

// Reads the message header of the one frame in `written`.
void check_reply(TMemoryBuffer& written, const std::string& name, std::int32_t seqid) {
  const std::string frame = written.getBufferAsString();
  fuzz_check(frame.size() >= 4, "a call that was read is answered");
  auto buffer = std::make_shared<TMemoryBuffer>(
      reinterpret_cast<std::uint8_t*>(const_cast<char*>(frame.data())),
      static_cast<std::uint32_t>(frame.size()), TMemoryBuffer::OBSERVE);
  TBinaryProtocol protocol(std::make_shared<TFramedTransport>(buffer));
  std::string reply_name;
  apache::thrift::protocol::TMessageType type;
  std::int32_t reply_seqid = 0;
  protocol.readMessageBegin(reply_name, type, reply_seqid);
  fuzz_check(
      type == apache::thrift::protocol::T_REPLY || type == apache::thrift::protocol::T_EXCEPTION,
      "an answer is a reply or an exception");
  fuzz_check(reply_name == name && reply_seqid == seqid,
             "an answer carries the call's name and sequence id");
}

}  // namespace
}  // namespace rstorm::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rstorm::fuzz;
  static const auto processor = [] {
    apache::thrift::GlobalOutput.setOutputFunction(quiet);
    return std::make_shared<rstorm::thrift::NimbusProcessor>(std::make_shared<ArgumentChecker>());
  }();
  // What the socket delivers: the frame's big-endian length, then the frame.
  std::string stream(4, '\0');
  const auto length = static_cast<std::uint32_t>(size);
  for (int i = 0; i < 4; ++i) stream[i] = static_cast<char>(length >> (24 - 8 * i));
  stream.append(reinterpret_cast<const char*>(data), size);
  auto in_buffer = std::make_shared<TMemoryBuffer>(reinterpret_cast<std::uint8_t*>(stream.data()),
                                                   static_cast<std::uint32_t>(stream.size()),
                                                   TMemoryBuffer::OBSERVE);
  auto in = server_protocol(in_buffer);
  auto out_buffer = std::make_shared<TMemoryBuffer>();
  auto out = std::make_shared<TBinaryProtocol>(std::make_shared<TFramedTransport>(out_buffer));
  // The header again, to know what the answer must name.
  std::string name;
  apache::thrift::protocol::TMessageType type = apache::thrift::protocol::T_EXCEPTION;
  std::int32_t seqid = 0;
  try {
    auto peek_buffer = std::make_shared<TMemoryBuffer>(
        reinterpret_cast<std::uint8_t*>(stream.data()), static_cast<std::uint32_t>(stream.size()),
        TMemoryBuffer::OBSERVE);
    server_protocol(peek_buffer)->readMessageBegin(name, type, seqid);
  } catch (const apache::thrift::TException&) {
  }
  try {
    if (!processor->process(in, out, nullptr)) return 0;
  } catch (const apache::thrift::TException&) {
    return 0;  // the server logs it and closes the connection
  }
  if (type == apache::thrift::protocol::T_CALL) check_reply(*out_buffer, name, seqid);
  return 0;
}
