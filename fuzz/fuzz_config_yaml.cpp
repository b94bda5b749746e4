// The config YAML (common/config_loader.hpp): any text given as an rstorm.yaml
// (daemons, `--config`) or read as a topology's YAML config, parsed with
// parse_yaml_config and checked with the config schema as load_config and
// with_topology_config do.
//
// Checks: an error names the file; every parsed key has an origin in the file;
// a parsed config converts to its Thrift form and back (what carries a
// topology's config from the client through nimbus to its workers) exactly
// when the schema accepts it, with every value of the same type and rendering.
#include "common/config_loader.hpp"
#include "common/thrift/codec.hpp"
#include "fuzz/fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rstorm;
  using rstorm::fuzz::fuzz_check;
  constexpr std::string_view kSource = "rstorm.yaml";
  auto config =
      parse_yaml_config(std::string_view(reinterpret_cast<const char*>(data), size), kSource);
  if (!config) {
    fuzz_check(config.status().message().find(kSource) != std::string::npos,
               "a config error names the file");
    return 0;
  }
  const Status checked = check_config(*config);
  if (!checked) fuzz_check(!checked.message().empty(), "a rejected key is named");
  auto again = config_from_thrift(config_to_thrift(*config));
  fuzz_check(again.is_ok() == checked.is_ok(),
             "a parsed config converts to Thrift and back exactly when the schema accepts it");
  if (!again) return 0;
  fuzz_check(again->entries().size() == config->entries().size(), "no config key is lost");
  for (const auto& [key, entry] : config->entries()) {
    fuzz_check(entry.origin.starts_with(std::string(kSource) + ":"), "a key's origin is the file");
    const Config::Entry* e = again->find(key);
    fuzz_check(e != nullptr && e->value.type_name() == entry.value.type_name() &&
                   e->value.to_string() == entry.value.to_string() && e->origin == entry.origin,
               "a config value converts to Thrift and back to the same value");
  }
  return 0;
}
