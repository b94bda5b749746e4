#include <gtest/gtest.h>

#include <rstorm/topology_library.hpp>

namespace rstorm {
namespace {

TEST(TopologyLibrary, LoadsLibraryWithMacroAndBuildsWithConfig) {
  auto loaded = load_topology_library(RSTORM_TEST_GOOD_LIB);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded->name(), "good");
  Config config;
  config.set("test.sinks", 3);
  auto topology = loaded->build(config);
  ASSERT_TRUE(topology.ok()) << topology.status().message();
  ASSERT_NE(topology->component("sink"), nullptr);
  EXPECT_EQ(topology->component("sink")->parallelism, 3);
  EXPECT_NE(topology->create_spout("numbers"), nullptr);
  EXPECT_NE(topology->create_bolt("sink"), nullptr);
}

TEST(TopologyLibrary, TopologyKeepsLibraryLoadedAfterLoaderIsGone) {
  std::optional<Topology> topology;
  {
    auto loaded = load_topology_library(RSTORM_TEST_GOOD_LIB);
    ASSERT_TRUE(loaded.ok());
    auto built = loaded->build(Config());
    ASSERT_TRUE(built.ok());
    topology.emplace(std::move(built).value());
  }
  auto spout = topology->create_spout("numbers");
  ASSERT_NE(spout, nullptr);
  OutputFieldsDeclarer d;
  spout->declare_output_fields(d);
  EXPECT_EQ(d.streams().at(0).fields, Fields({"n"}));
}

TEST(TopologyLibrary, LibraryWithoutMacroFailsNamingFile) {
  auto loaded = load_topology_library(RSTORM_TEST_NO_MACRO_LIB);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().message(),
            std::string("topology library '") + RSTORM_TEST_NO_MACRO_LIB +
                "' exports no topology: it has no RSTORM_TOPOLOGY(...) block");
}

TEST(TopologyLibrary, LibraryBuiltAgainstOtherApiVersionFailsNamingFile) {
  auto loaded = load_topology_library(RSTORM_TEST_OLD_VERSION_LIB);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().message(),
            std::string("topology library '") + RSTORM_TEST_OLD_VERSION_LIB +
                "' was built against rstorm API version 0, but this rstorm has API version " +
                std::to_string(kApiVersion) + "; rebuild the topology");
}

TEST(TopologyLibrary, MissingFileFailsNamingFile) {
  auto loaded = load_topology_library("/nonexistent/libnothing.so");
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().message(),
            "topology library '/nonexistent/libnothing.so' does not exist");
}

TEST(TopologyLibrary, FileThatIsNotALibraryFailsNamingFile) {
  std::string path = ::testing::TempDir() + "rstorm_not_a_library.so";
  FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs("not an ELF file\n", f);
  std::fclose(f);
  auto loaded = load_topology_library(path);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().message().rfind("cannot load topology library '" + path + "': ", 0),
            0u)
      << loaded.status().message();
  std::remove(path.c_str());
}

}  // namespace
}  // namespace rstorm
