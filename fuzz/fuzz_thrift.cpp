// Thrift structs stored as ZooKeeper node values and blobs
// (common/thrift/codec.hpp, compact protocol): every type nimbus and
// supervisors pass to decode_thrift<T>. The first input byte picks the struct,
// the rest is decoded as a node value or blob read back. A TopologyInfo's
// config then goes through config_from_thrift, as Nimbus::load does. (Structs
// that arrive in Nimbus RPC calls: fuzz_nimbus_rpc.)
//
// Checks: a value that decodes re-encodes into bytes that decode again and
// encode to the same bytes (compared as bytes: a NaN double is not equal to
// itself); a decode error names the struct; a config that converts converts
// back and forth to the same rendering.
#include "common/thrift/codec.hpp"
#include "fuzz/fuzz_check.hpp"

namespace rstorm::fuzz {
namespace {

template <typename T>
void round_trip(std::string_view bytes, std::string_view name, T* decoded = nullptr) {
  auto value = decode_thrift<T>(bytes, name);
  if (!value) {
    fuzz_check(value.status().message().find(name) != std::string::npos,
               "a decode error names the struct");
    return;
  }
  const std::string encoded = encode_thrift(*value);
  auto again = decode_thrift<T>(encoded, name);
  fuzz_check(again.is_ok(), "a re-encoded struct decodes");
  fuzz_check(encode_thrift(*again) == encoded, "a re-encoded struct decodes to the same value");
  if (decoded != nullptr) *decoded = std::move(*value);
}

void check_config(const std::map<std::string, thrift::ConfigEntry>& entries) {
  auto config = config_from_thrift(entries);
  if (!config) return;
  auto again = config_from_thrift(config_to_thrift(*config));
  fuzz_check(again.is_ok(), "a config read from Thrift converts back");
  fuzz_check(again->entries().size() == config->entries().size(), "no config key is lost");
  for (const auto& [key, entry] : config->entries()) {
    const Config::Entry* e = again->find(key);
    fuzz_check(e != nullptr && e->value.type_name() == entry.value.type_name() &&
                   e->value.to_string() == entry.value.to_string() && e->origin == entry.origin,
               "a config value converts back to the same value");
  }
}

}  // namespace
}  // namespace rstorm::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rstorm;
  using namespace rstorm::fuzz;
  if (size == 0) return 0;
  const auto input = select(data, size, 6);
  switch (input.choice) {
    case 0:
      round_trip<thrift::SupervisorInfo>(input.bytes, "SupervisorInfo");
      break;
    case 1:
      round_trip<thrift::TopologyRecord>(input.bytes, "TopologyRecord");
      break;
    case 2:
      round_trip<thrift::Assignment>(input.bytes, "Assignment");
      break;
    case 3:
      round_trip<thrift::NimbusSummary>(input.bytes, "NimbusSummary");
      break;
    case 4:
      round_trip<thrift::ErrorInfo>(input.bytes, "ErrorInfo");
      break;
    case 5: {
      thrift::TopologyInfo info;
      round_trip<thrift::TopologyInfo>(input.bytes, "TopologyInfo", &info);
      check_config(info.config);
      break;
    }
  }
  return 0;
}
