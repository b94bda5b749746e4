#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include <rstorm/local_cluster.hpp>
#include <rstorm/topology_library.hpp>

namespace rstorm {
namespace {

TEST(Exclamation, EveryWordPassesBothBoltsAndIsAcked) {
  constexpr std::uint64_t kWords = 2000;
  auto loaded = load_topology_library(RSTORM_EXCLAMATION_LIB);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  Config conf;
  conf.set("exclamation.words.limit", static_cast<std::int64_t>(kWords));
  conf.set("topology.message.timeout.secs", 120);
  auto topology = loaded->build(conf);
  ASSERT_TRUE(topology.ok()) << topology.status().message();
  LocalCluster cluster;
  ASSERT_TRUE(cluster.submit("ex", conf, *topology).is_ok());
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < end &&
         cluster.stats("ex")->component("word")->acked < kWords) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  auto stats = cluster.stats("ex");
  EXPECT_EQ(stats->component("word")->acked, kWords);
  EXPECT_EQ(stats->component("word")->failed, 0u);
  EXPECT_EQ(stats->component("exclaim1")->executed, kWords);
  EXPECT_EQ(stats->component("exclaim2")->executed, kWords);
  ASSERT_TRUE(cluster.kill("ex").is_ok());
}

}  // namespace
}  // namespace rstorm
