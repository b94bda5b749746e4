// nimbus.seeds parsing: an entry is "host" (at nimbus.thrift.port) or
// "host:port"; anything else is refused naming the entry.
#include <gtest/gtest.h>

#include "nimbus/nimbus_client.hpp"

namespace rstorm::nimbus {
namespace {

Config config_with(ConfigValue::List seeds, std::int64_t port) {
  Config config;
  config.set(std::string(keys::kNimbusSeeds), ConfigValue(std::move(seeds)));
  config.set(std::string(keys::kNimbusThriftPort), ConfigValue(port));
  return config;
}

std::string parse_error(const std::string& entry) {
  auto seed = parse_nimbus_seed(entry, 6627);
  EXPECT_FALSE(seed) << entry;
  if (seed) return "";
  EXPECT_EQ(seed.code(), ErrorCode::kInvalidArgument);
  return seed.status().message();
}

TEST(NimbusSeedsTest, HostAloneTakesTheDefaultPort) {
  auto seed = parse_nimbus_seed("nimbus-a", 6627);
  ASSERT_TRUE(seed) << seed.status().to_string();
  EXPECT_EQ(*seed, (NimbusAddress{"nimbus-a", 6627}));
}

TEST(NimbusSeedsTest, HostColonPortTakesItsOwnPort) {
  auto seed = parse_nimbus_seed("127.0.0.1:7001", 6627);
  ASSERT_TRUE(seed) << seed.status().to_string();
  EXPECT_EQ(*seed, (NimbusAddress{"127.0.0.1", 7001}));
  EXPECT_EQ(seed->to_string(), "127.0.0.1:7001");
}

TEST(NimbusSeedsTest, EntryWithTwoColonsIsRefused) {
  EXPECT_EQ(parse_error("a:b:c"), "nimbus.seeds entry 'a:b:c' is not host or host:port");
}

TEST(NimbusSeedsTest, EntryWithoutHostIsRefused) {
  EXPECT_EQ(parse_error(":7001"), "nimbus.seeds entry ':7001' has no host (want host or host:port)");
  EXPECT_EQ(parse_error(""), "nimbus.seeds entry '' has no host (want host or host:port)");
}

TEST(NimbusSeedsTest, NonNumericOrOutOfRangePortIsRefused) {
  EXPECT_EQ(parse_error("h:x"), "nimbus.seeds entry 'h:x' has port 'x'; want a number in 1..65535");
  EXPECT_EQ(parse_error("h:"), "nimbus.seeds entry 'h:' has port ''; want a number in 1..65535");
  EXPECT_EQ(parse_error("h:0"), "nimbus.seeds entry 'h:0' has port '0'; want a number in 1..65535");
  EXPECT_EQ(parse_error("h:65536"),
            "nimbus.seeds entry 'h:65536' has port '65536'; want a number in 1..65535");
  EXPECT_EQ(parse_error("h:70a"),
            "nimbus.seeds entry 'h:70a' has port '70a'; want a number in 1..65535");
}

TEST(NimbusSeedsTest, OptionsFromConfigMixesHostsAndHostPortsInOrder) {
  const Config config =
      config_with({ConfigValue("127.0.0.1:7001"), ConfigValue("127.0.0.1"),
                   ConfigValue("127.0.0.1:7002")},
                  6700);
  const auto options = NimbusClient::options_from_config(config);
  const std::vector<NimbusAddress> want{
      {"127.0.0.1", 7001}, {"127.0.0.1", 6700}, {"127.0.0.1", 7002}};
  EXPECT_EQ(options.seeds, want);
}

TEST(NimbusSeedsTest, OptionsFromConfigThrowsConfigErrorOnMalformedSeed) {
  const Config config = config_with({ConfigValue("127.0.0.1:7001"), ConfigValue("a:b:c")}, 6627);
  try {
    (void)NimbusClient::options_from_config(config);
    FAIL() << "malformed seed accepted";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "nimbus.seeds entry 'a:b:c' is not host or host:port");
  }
}

TEST(NimbusSeedsTest, ConnectSkipsDeadSeedsAndNamesEveryOneWhenAllAreDown) {
  // Nothing listens on these (ports 1 and 2 need root to bind).
  NimbusClient::Options options;
  options.seeds = {{"127.0.0.1", 1}, {"127.0.0.1", 2}};
  options.timeout = std::chrono::milliseconds(2000);
  auto client = NimbusClient::connect(options);
  ASSERT_FALSE(client);
  EXPECT_EQ(client.code(), ErrorCode::kUnavailable);
  EXPECT_NE(client.status().message().find("127.0.0.1:1"), std::string::npos)
      << client.status().message();
  EXPECT_NE(client.status().message().find("127.0.0.1:2"), std::string::npos)
      << client.status().message();
}

}  // namespace
}  // namespace rstorm::nimbus
