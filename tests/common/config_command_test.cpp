// The real `rstorm` binary on the word count library: `rstorm local` and
// `rstorm submit` reject the same bad `-c` with the same message (submit before
// it looks for nimbus), and a local run takes good values and users' keys.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace {

struct RunResult {
  int exit_code = -1;
  std::string err;
};

class ConfigCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/rstorm-config-command-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Runs `rstorm <command> <word count lib> <args>` in dir_ (its local state
  // lands there), nimbus pointed at a port where none listens.
  RunResult run(const std::string& command, const std::string& args) {
    const auto err = dir_ / "err";
    const std::string cmd = "cd '" + dir_.string() + "' && '" + RSTORM_BINARY + "' " + command +
                            " '" + RSTORM_WORD_COUNT_LIB + "' " + args +
                            " -c nimbus.seeds=[127.0.0.1:1] >/dev/null 2>'" + err.string() +
                            "' </dev/null";
    const int status = std::system(cmd.c_str());
    RunResult r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::ifstream in(err);
    std::ostringstream text;
    text << in.rdbuf();
    r.err = text.str();
    return r;
  }

  std::filesystem::path dir_;
};

TEST_F(ConfigCommandTest, LocalAndSubmitRejectANegativeMaxSpoutPendingAlike) {
  const std::string expected =
      ": topology.max.spout.pending: -5 (command line) is out of range: expected an integer >= 1 "
      "or null\n";
  RunResult local = run("local", "--duration 1 -c topology.max.spout.pending=-5");
  EXPECT_EQ(local.exit_code, 2);
  EXPECT_EQ(local.err, "rstorm local" + expected);
  RunResult submit = run("submit", "--name wc -c topology.max.spout.pending=-5");
  EXPECT_EQ(submit.exit_code, 2);
  EXPECT_EQ(submit.err, "rstorm submit" + expected);
}

TEST_F(ConfigCommandTest, LocalAndSubmitRejectATypoAlike) {
  const std::string expected =
      ": topology.max.spout.pendng (command line) is not a config key rstorm reads; did you mean "
      "'topology.max.spout.pending'?\n";
  RunResult local = run("local", "--duration 1 -c topology.max.spout.pendng=5");
  EXPECT_EQ(local.exit_code, 2);
  EXPECT_EQ(local.err, "rstorm local" + expected);
  RunResult submit = run("submit", "--name wc -c topology.max.spout.pendng=5");
  EXPECT_EQ(submit.exit_code, 2);
  EXPECT_EQ(submit.err, "rstorm submit" + expected);
}

TEST_F(ConfigCommandTest, LocalRunTakesGoodValuesAndUsersKeys) {
  RunResult local = run("local",
                        "--duration 0.5 -c topology.max.spout.pending=100 "
                        "-c wordcount.report.print=false");
  EXPECT_EQ(local.exit_code, 0) << local.err;
}

}  // namespace
