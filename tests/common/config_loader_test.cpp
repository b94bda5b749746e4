// Layered config loading: defaults.yaml < rstorm.yaml < command line < topology.
#include "common/config_loader.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

namespace rstorm {
namespace {

class ConfigLoaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/rstorm-config-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path write(const std::string& name, const std::string& text) {
    auto path = dir_ / name;
    std::ofstream(path) << text;
    return path;
  }

  std::filesystem::path dir_;
};

TEST(DefaultConfig, HasStormDefaults) {
  const Config& d = default_config();
  EXPECT_EQ(d.get_int(keys::kNimbusThriftPort), 6627);
  EXPECT_EQ(d.get_int_list(keys::kSupervisorSlotsPorts),
            (std::vector<std::int64_t>{6700, 6701, 6702, 6703}));
  EXPECT_EQ(d.get_int(keys::kZookeeperPort), 2181);
  EXPECT_EQ(d.get_string(keys::kZookeeperRoot), "/rstorm");
  EXPECT_EQ(d.get_double(keys::kSupervisorMemoryCapacityMb), 4096.0);
  EXPECT_EQ(d.get_double(keys::kSupervisorCpuCapacity), 400.0);
  EXPECT_EQ(d.get_double(keys::kTopologyComponentOnheapMb), 128.0);
  EXPECT_EQ(d.get_double(keys::kTopologyComponentCpuPcorePercent), 10.0);
  EXPECT_EQ(d.get_double(keys::kTopologyWorkerMaxHeapSizeMb), 768.0);
  EXPECT_EQ(d.get_int(keys::kTopologyMessageTimeoutSecs), 30);
  EXPECT_EQ(d.get_int(keys::kTopologyWorkers), 1);
  EXPECT_EQ(d.find(keys::kTopologyName)->origin.substr(0, 14), "defaults.yaml:");
}

TEST(DefaultConfig, DefinesEveryKeyOfTheApi) {
  const Config& d = default_config();
  for (std::string_view key :
       {keys::kZookeeperServers, keys::kZookeeperPort, keys::kZookeeperRoot,
        keys::kZookeeperSessionTimeout, keys::kLocalDir, keys::kNimbusSeeds,
        keys::kNimbusThriftPort, keys::kNimbusTaskTimeoutSecs, keys::kNimbusSupervisorTimeoutSecs,
        keys::kNimbusMonitorFreqSecs, keys::kSupervisorSlotsPorts,
        keys::kSupervisorMemoryCapacityMb, keys::kSupervisorCpuCapacity, keys::kSupervisorRack,
        keys::kSupervisorWorkerTimeoutSecs, keys::kTopologyWorkers, keys::kTopologyAckerExecutors,
        keys::kTopologyMessageTimeoutSecs, keys::kTopologyMaxSpoutPending,
        keys::kTopologyTickTupleFreqSecs, keys::kTopologyDebug,
        keys::kTopologyExecutorReceiveBufferSize, keys::kTopologyTransferBatchSize,
        keys::kTopologyBatchFlushIntervalMillis, keys::kTopologyComponentOnheapMb,
        keys::kTopologyComponentOffheapMb, keys::kTopologyComponentCpuPcorePercent,
        keys::kTopologyWorkerMaxHeapSizeMb, keys::kTopologyPriority,
        keys::kTopologySchedulerStrategy, keys::kTopologyName}) {
    EXPECT_TRUE(d.contains(key)) << key;
  }
}

TEST(DefaultConfig, ExampleFileLoadsCleanly) {
  ConfigLoadOptions options;
  options.config_file = std::filesystem::path(RSTORM_SOURCE_DIR) / "conf/rstorm.yaml.example";
  auto config = load_config(options);
  ASSERT_TRUE(config) << config.status().to_string();
  EXPECT_EQ(config->get_int_list(keys::kSupervisorSlotsPorts),
            (std::vector<std::int64_t>{6700, 6701}));
  EXPECT_EQ(config->get_string(keys::kZookeeperRoot), "/rstorm-dev");
}

TEST_F(ConfigLoaderTest, LayersDefaultsFileCommandLineTopology) {
  auto file = write("rstorm.yaml",
                    "topology.workers: 3\n"
                    "nimbus.thrift.port: 7000\n"
                    "supervisor.rack: r1\n");
  ConfigLoadOptions options{file, {"topology.workers=5", "supervisor.slots.ports=[7700]"}};
  auto config = load_config(options);
  ASSERT_TRUE(config) << config.status().to_string();
  EXPECT_EQ(config->get_int(keys::kTopologyWorkers), 5);
  EXPECT_EQ(config->find(keys::kTopologyWorkers)->origin, "command line");
  EXPECT_EQ(config->get_int(keys::kNimbusThriftPort), 7000);
  EXPECT_EQ(config->find(keys::kNimbusThriftPort)->origin, file.string() + ":2");
  EXPECT_EQ(config->get_string(keys::kSupervisorRack), "r1");
  EXPECT_EQ(config->get_int_list(keys::kSupervisorSlotsPorts), (std::vector<std::int64_t>{7700}));
  EXPECT_EQ(config->get_int(keys::kZookeeperPort), 2181);

  Config topology;
  topology.set(std::string(keys::kTopologyWorkers), 8, "topology");
  topology.set("topology.wordcount.window", 60, "topology");
  auto merged = with_topology_config(*config, topology);
  ASSERT_TRUE(merged) << merged.status().to_string();
  EXPECT_EQ(merged->get_int(keys::kTopologyWorkers), 8);
  EXPECT_EQ(merged->get_int("topology.wordcount.window"), 60);
  EXPECT_EQ(merged->get_int(keys::kNimbusThriftPort), 7000);
}

TEST_F(ConfigLoaderTest, WrongTypeInFileNamesKeyFileAndLine) {
  auto file = write("rstorm.yaml", "# comment\nnimbus.seeds: [\"a\"]\ntopology.workers: four\n");
  auto config = load_config({file, {}});
  ASSERT_FALSE(config);
  EXPECT_EQ(config.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(config.status().message(),
            "topology.workers: \"four\" (" + file.string() +
                ":3) is a string: expected an integer >= 1");
}

TEST_F(ConfigLoaderTest, WrongListElementTypeIsRejected) {
  auto file = write("rstorm.yaml", "supervisor.slots.ports: [6700, abc]\n");
  auto config = load_config({file, {}});
  ASSERT_FALSE(config);
  EXPECT_EQ(config.status().message(),
            "supervisor.slots.ports: [6700, \"abc\"] (" + file.string() +
                ":1) is a list with a string at index 1: expected a list of integers between 1 "
                "and 65535");
}

TEST_F(ConfigLoaderTest, IntegerIsAcceptedWhereANumberIsExpected) {
  auto config = load_config({std::nullopt, {"supervisor.memory.capacity.mb=2048"}});
  ASSERT_TRUE(config) << config.status().to_string();
  EXPECT_EQ(config->get_double(keys::kSupervisorMemoryCapacityMb), 2048.0);
}

TEST_F(ConfigLoaderTest, NumberIsRejectedWhereAnIntegerIsExpected) {
  auto config = load_config({std::nullopt, {"nimbus.thrift.port=66.27"}});
  ASSERT_FALSE(config);
  EXPECT_EQ(config.status().message(),
            "nimbus.thrift.port: 66.27 (command line) is a number: expected an integer between 0 "
            "and 65535");
}

TEST_F(ConfigLoaderTest, UnknownDaemonKeyIsRejectedWithSuggestion) {
  auto file = write("rstorm.yaml", "nimbus.thirft.port: 6627\n");
  auto config = load_config({file, {}});
  ASSERT_FALSE(config);
  EXPECT_EQ(config.status().message(),
            "nimbus.thirft.port (" + file.string() +
                ":1) is not a config key rstorm reads; did you mean 'nimbus.thrift.port'?");
}

TEST_F(ConfigLoaderTest, UnknownDaemonKeyOnCommandLineIsRejected) {
  auto config = load_config({std::nullopt, {"worker.frobnicate=1"}});
  ASSERT_FALSE(config);
  EXPECT_EQ(config.status().message().rfind("worker.frobnicate (command line) is not a config key",
                                            0),
            0u)
      << config.status().message();
}

TEST_F(ConfigLoaderTest, UserTopologyKeysAreAccepted) {
  auto config = load_config({std::nullopt, {"topology.my.setting=abc", "app.threshold=0.5"}});
  ASSERT_TRUE(config) << config.status().to_string();
  EXPECT_EQ(config->get_string("topology.my.setting"), "abc");
  EXPECT_EQ(config->get_double("app.threshold"), 0.5);
}

TEST_F(ConfigLoaderTest, NullDefaultKeyTakesAValueOfItsType) {
  auto config = load_config({std::nullopt, {"topology.max.spout.pending=1000"}});
  ASSERT_TRUE(config) << config.status().to_string();
  EXPECT_EQ(config->get_int(keys::kTopologyMaxSpoutPending), 1000);
}

TEST_F(ConfigLoaderTest, TopologyConfigWithWrongTypeIsRejected) {
  Config topology;
  topology.set(std::string(keys::kTopologyDebug), "yes please", "topology");
  auto merged = with_topology_config(default_config(), topology);
  ASSERT_FALSE(merged);
  EXPECT_EQ(merged.status().message(),
            "topology.debug: \"yes please\" (topology) is a string: expected true or false");
}

TEST_F(ConfigLoaderTest, MissingConfigFileNamesThePath) {
  auto config = load_config({dir_ / "absent.yaml", {}});
  ASSERT_FALSE(config);
  EXPECT_EQ(config.status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(config.status().message(),
            "cannot read config file " + (dir_ / "absent.yaml").string() + ": no such file");
}

TEST_F(ConfigLoaderTest, MalformedYamlNamesFileAndLine) {
  auto file = write("rstorm.yaml", "topology.workers: 1\nnimbus.seeds: [a, b\n");
  auto config = load_config({file, {}});
  ASSERT_FALSE(config);
  EXPECT_EQ(config.status().message().rfind(file.string() + ":", 0), 0u)
      << config.status().message();
  EXPECT_NE(config.status().message().find("invalid YAML"), std::string::npos);
}

TEST_F(ConfigLoaderTest, TopLevelListIsRejected) {
  auto file = write("rstorm.yaml", "- a\n- b\n");
  auto config = load_config({file, {}});
  ASSERT_FALSE(config);
  EXPECT_NE(config.status().message().find("expected a map of config keys"), std::string::npos);
}

TEST_F(ConfigLoaderTest, MapValueIsRejected) {
  auto file = write("rstorm.yaml", "topology.workers: 1\ntopology.x:\n  a: 1\n");
  auto config = load_config({file, {}});
  ASSERT_FALSE(config);
  EXPECT_NE(config.status().message().find("'topology.x' (" + file.string() + ":3) is a map"),
            std::string::npos)
      << config.status().message();
}

TEST_F(ConfigLoaderTest, QuotedScalarStaysAString) {
  auto file = write("rstorm.yaml", "supervisor.rack: \"42\"\n");
  auto config = load_config({file, {}});
  ASSERT_TRUE(config) << config.status().to_string();
  EXPECT_EQ(config->get_string(keys::kSupervisorRack), "42");
}

TEST_F(ConfigLoaderTest, EmptyFileLeavesDefaults) {
  auto file = write("rstorm.yaml", "# nothing\n");
  auto config = load_config({file, {}});
  ASSERT_TRUE(config) << config.status().to_string();
  EXPECT_EQ(config->get_int(keys::kNimbusThriftPort), 6627);
}

TEST_F(ConfigLoaderTest, BadOverrideIsAnError) {
  auto config = load_config({std::nullopt, {"topology.workers"}});
  ASSERT_FALSE(config);
  EXPECT_NE(config.status().message().find("has no '='"), std::string::npos);
}

}  // namespace
}  // namespace rstorm
