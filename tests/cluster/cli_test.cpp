// The `rstorm` command line itself, as a user meets it: its version, an
// unknown verb, and what it prints when nimbus cannot be reached.
#include <gtest/gtest.h>

#include <rstorm/topology_library.hpp>
#include <string>
#include <utility>
#include <vector>

#include "tests/cluster/cli_runner.hpp"

namespace rstorm::testing {
namespace {

TEST(CliTest, VersionNamesTheReleaseTheCommitAndTheTopologyApi) {
  auto verb = run_cli({"version"});
  ASSERT_EQ(verb.exit_code, 0) << verb.output;
  EXPECT_EQ(verb.output.rfind("rstorm 0.", 0), 0u) << verb.output;
  EXPECT_NE(verb.output.find("(commit "), std::string::npos) << verb.output;
  EXPECT_NE(verb.output.find(", topology API " + std::to_string(kApiVersion) + ")"), std::string::npos)
      << verb.output;
  auto flag = run_cli({"--version"});
  ASSERT_EQ(flag.exit_code, 0) << flag.output;
  EXPECT_EQ(flag.output, verb.output);
}

TEST(CliTest, UnknownVerbIsNamedWithTheNearestOne) {
  auto r = run_cli({"submti", "lib.so"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(r.output,
            "rstorm: unknown command 'submti'; did you mean 'submit'? (rstorm --help lists the "
            "commands)\n");
  auto far = run_cli({"frobnicate"});
  EXPECT_EQ(far.exit_code, 2) << far.output;
  EXPECT_EQ(far.output.find("did you mean"), std::string::npos) << far.output;
}

// Counts and waits that are not whole numbers in range are refused before
// nimbus is asked, in words naming the option and the value.
TEST(CliTest, BadNumbersAreRefusedNamingTheOptionAndTheValue) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"rebalance", "wc", "-n", "0"}, "-n: must be a whole number of at least 1, not '0'"},
      {{"rebalance", "wc", "-w", "-1"}, "--wait: must be a whole number of at least 0, not '-1'"},
      {{"kill", "wc", "-w", "abc"}, "--wait: must be a whole number of at least 0, not 'abc'"},
      {{"submit", "lib.so", "--wait", "--wait-timeout", "-5"},
       "--wait-timeout: must be a whole number of at least 1, not '-5'"},
      {{"submit", "lib.so", "--name", ""}, "rstorm submit: --name is empty"},
  };
  for (const auto& [args, message] : cases) {
    auto r = run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("1797693134"), std::string::npos) << r.output;  // no DBL_MAX
  }
}

TEST(CliTest, UnreachableNimbusIsExplainedWithoutThriftLibraryLines) {
  // Port 1 on loopback: nothing listens there.
  auto r = run_cli({"list", "-c", "nimbus.seeds=[\"127.0.0.1:1\"]"});
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_EQ(r.output.find("Thrift"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("TSocket"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("127.0.0.1:1"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace rstorm::testing
