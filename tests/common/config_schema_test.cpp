// The config schema: held to conf/defaults.yaml and to the keys the code
// reads, and each rule of its validator as `rstorm local`, `rstorm submit`,
// nimbus and the daemons see it.
#include "rstorm/config_schema.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "common/config_loader.hpp"

namespace rstorm {
namespace {

std::string verdict(const std::vector<std::string>& args) {
  auto config = parse_overrides(args);
  return config ? "ok" : config.status().message();
}

TEST(ConfigSchema, DeclaresExactlyTheKeysOfDefaultsYaml) {
  std::set<std::string> in_defaults, in_schema;
  for (const auto& [key, entry] : default_config().entries()) in_defaults.insert(key);
  for (const auto& spec : config_schema()) in_schema.insert(std::string(spec.name));
  for (const auto& key : in_defaults) EXPECT_TRUE(in_schema.count(key)) << key << ": no schema";
  for (const auto& key : in_schema) EXPECT_TRUE(in_defaults.count(key)) << key << ": no default";
}

TEST(ConfigSchema, EveryDefaultHasItsTypeAndRange) {
  Status s = check_config(default_config());
  EXPECT_TRUE(s) << s.message();
}

TEST(ConfigSchema, EveryKeyIsDescribedOnceInOrder) {
  const auto& schema = config_schema();
  for (std::size_t i = 0; i < schema.size(); ++i) {
    EXPECT_FALSE(schema[i].description.empty()) << schema[i].name;
    if (i > 0) {
      EXPECT_LT(schema[i - 1].name, schema[i].name);
    }
    EXPECT_EQ(find_config_key(schema[i].name), &schema[i]);
  }
  EXPECT_EQ(find_config_key("topology.my.setting"), nullptr);
}

// Every key the daemons, CLI, scheduler and runtime read by name (a getter,
// find or contains with a literal key, or a keys:: constant) is declared: one
// that is not would be read without ever being checked.
TEST(ConfigSchema, DeclaresEveryKeyTheCodeReads) {
  const std::regex literal(
      R"re("((?:storm|nimbus|supervisor|worker|topology)\.[a-z0-9_.]*[a-z0-9_])")re");
  const std::regex read_call(
      R"re((get_\w+|find|contains|config_int|secs|set_by_user)\(|key == |std::string_view k)re");
  std::set<std::string> read;
  for (const char* dir :
       {"cli", "common", "nimbus", "scheduler", "supervisor", "topology-api", "worker"}) {
    for (const auto& file : std::filesystem::recursive_directory_iterator(
             std::filesystem::path(RSTORM_SOURCE_DIR) / dir)) {
      const auto ext = file.path().extension();
      if (ext != ".cpp" && ext != ".hpp") continue;
      std::ifstream in(file.path());
      std::stringstream text;
      text << in.rdbuf();
      const std::string source = text.str();
      for (auto it = std::sregex_iterator(source.begin(), source.end(), literal);
           it != std::sregex_iterator(); ++it) {
        // The statement up to the literal: from the last ';', '{' or '}'.
        const auto at = static_cast<std::size_t>(it->position());
        const auto end = source.find_last_of(";{}", at);
        const auto from = end == std::string::npos ? 0 : end;
        const std::string before = source.substr(from, at - from);
        if (!std::regex_search(before, read_call)) continue;
        read.insert((*it)[1]);
        EXPECT_NE(find_config_key((*it)[1].str()), nullptr)
            << (*it)[1] << " is read in " << file.path() << " but not declared";
      }
    }
  }
  // Reads through each kind of call were seen.
  for (const char* key : {"storm.zookeeper.servers", "supervisor.worker.shutdown.sleep.secs",
                          "storm.messaging.netty.max_wait_ms", "nimbus.task.launch.secs",
                          "topology.acker.cpu.pcore.percent", "storm.metrics.sd.dir"}) {
    EXPECT_TRUE(read.count(key)) << key;
  }
}

TEST(ConfigSchema, DescribesWhatItExpects) {
  EXPECT_EQ(describe_expected(*find_config_key("topology.max.spout.pending")),
            "an integer >= 1 or null");
  EXPECT_EQ(describe_expected(*find_config_key("supervisor.slots.ports")),
            "a list of integers between 1 and 65535");
  EXPECT_EQ(describe_expected(*find_config_key("nimbus.monitor.freq.secs")), "a number >= 0.001");
  EXPECT_EQ(describe_expected(*find_config_key("topology.scheduler.strategy")),
            "one of \"resource-aware\", \"round-robin\"");
  EXPECT_EQ(describe_expected(*find_config_key("topology.debug")), "true or false");
  EXPECT_EQ(describe_expected(*find_config_key("supervisor.resources.map")),
            "a list of strings or null");
}

TEST(ConfigValidation, OutOfRangeNamesKeyValueOriginAndExpected) {
  EXPECT_EQ(verdict({"topology.max.spout.pending=-5"}),
            "topology.max.spout.pending: -5 (command line) is out of range: expected an integer "
            ">= 1 or null");
  EXPECT_EQ(verdict({"supervisor.slots.ports=[6700, 70000]"}),
            "supervisor.slots.ports: [6700, 70000] (command line) is out of range: expected a "
            "list of integers between 1 and 65535");
  EXPECT_EQ(verdict({"nimbus.monitor.freq.secs=0"}),
            "nimbus.monitor.freq.secs: 0 (command line) is out of range: expected a number >= "
            "0.001");
  EXPECT_EQ(verdict({"supervisor.memory.capacity.mb=.nan"}),
            "supervisor.memory.capacity.mb: .nan (command line) is out of range: expected a "
            "number >= 0");
}

TEST(ConfigValidation, WrongTypeNamesKeyValueOriginAndExpected) {
  EXPECT_EQ(verdict({"topology.workers=abc"}),
            "topology.workers: \"abc\" (command line) is a string: expected an integer >= 1");
  EXPECT_EQ(verdict({"topology.max.spout.pending=abc"}),
            "topology.max.spout.pending: \"abc\" (command line) is a string: expected an integer "
            ">= 1 or null");
  EXPECT_EQ(verdict({"topology.workers=null"}),
            "topology.workers: null (command line) is null: expected an integer >= 1");
  EXPECT_EQ(verdict({"nimbus.seeds=[a, 7]"}),
            "nimbus.seeds: [\"a\", 7] (command line) is a list with an integer at index 1: "
            "expected a list of strings");
  EXPECT_EQ(verdict({"topology.scheduler.strategy=fastest"}),
            "topology.scheduler.strategy: \"fastest\" (command line) is not allowed: expected one "
            "of \"resource-aware\", \"round-robin\"");
}

TEST(ConfigValidation, AcceptsValuesOfTheKeysType) {
  EXPECT_EQ(verdict({"topology.max.spout.pending=1000", "topology.max.spout.pending=null",
                     "nimbus.monitor.freq.secs=0.5", "supervisor.memory.capacity.mb=2048",
                     "nimbus.metrics.port=-1", "topology.scheduler.strategy=round-robin",
                     "supervisor.resources.map=[gpu.count=2]"}),
            "ok");
}

TEST(ConfigValidation, NearMissOfAKnownKeyIsATypo) {
  EXPECT_EQ(verdict({"topology.max.spout.pendng=5"}),
            "topology.max.spout.pendng (command line) is not a config key rstorm reads; did you "
            "mean 'topology.max.spout.pending'?");
  EXPECT_EQ(verdict({"nimbus.thirft.port=6627"}),
            "nimbus.thirft.port (command line) is not a config key rstorm reads; did you mean "
            "'nimbus.thrift.port'?");
  EXPECT_EQ(verdict({"supervisor.slot.port=[6700]"}),
            "supervisor.slot.port (command line) is not a config key rstorm reads; did you mean "
            "'supervisor.slots.ports'?");
}

TEST(ConfigValidation, UnknownDaemonKeyIsRejected) {
  EXPECT_EQ(verdict({"worker.frobnicate=1"}),
            "worker.frobnicate (command line) is not a config key rstorm reads; under storm., "
            "nimbus., supervisor. and worker. only known keys are allowed (see "
            "conf/defaults.yaml)");
}

TEST(ConfigValidation, UsersOwnKeysAreAccepted) {
  EXPECT_EQ(verdict({"topology.my.setting=abc", "topology.wordcount.window=60",
                     "wordcount.sentences.limit=-1", "app.threshold=0.5"}),
            "ok");
}

TEST(ConfigValidation, ReportsEveryProblemAtOnce) {
  EXPECT_EQ(verdict({"topology.workers=0", "topology.debug=yes", "topology.my.setting=1"}),
            "topology.debug: \"yes\" (command line) is a string: expected true or false; "
            "topology.workers: 0 (command line) is out of range: expected an integer >= 1");
}

// `rstorm local` reads -c with parse_overrides; `rstorm submit` (and every
// command and daemon) with load_config. The same arguments, the same verdict.
TEST(ConfigValidation, LocalAndSubmitGiveTheSameVerdict) {
  const std::vector<std::vector<std::string>> cases = {
      {"topology.max.spout.pending=-5"},
      {"topology.workers=abc"},
      {"topology.max.spout.pending=abc"},
      {"topology.max.spout.pendng=5"},
      {"worker.frobnicate=1"},
      {"topology.workers"},
      {"topology.workers=2", "topology.max.spout.pending=100", "topology.my.setting=x"},
  };
  for (const auto& args : cases) {
    auto local = parse_overrides(args);
    auto submit = load_config({std::nullopt, args});
    ASSERT_EQ(local.is_ok(), submit.is_ok()) << args[0];
    EXPECT_EQ(local.status().message(), submit.status().message()) << args[0];
    if (local) {
      for (const auto& [key, entry] : local->entries()) {
        EXPECT_EQ(submit->find(key)->value, entry.value) << key;
      }
    }
  }
}

TEST(ConfigValidation, FileEntryNamesFileAndLine) {
  char tmpl[] = "/tmp/rstorm-schema-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::filesystem::path file = std::filesystem::path(tmpl) / "rstorm.yaml";
  std::ofstream(file) << "# cluster\nnimbus.seeds: [\"a\"]\ntopology.max.spout.pending: -5\n";
  auto config = load_config({file, {}});
  std::filesystem::remove_all(tmpl);
  ASSERT_FALSE(config);
  EXPECT_EQ(config.status().message(), "topology.max.spout.pending: -5 (" + file.string() +
                                           ":3) is out of range: expected an integer >= 1 or null");
}

}  // namespace
}  // namespace rstorm
