// Runs the tagflow binary: `tagflow env list` and `tagflow env step`.
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace {

struct CommandResult {
  int exit_code = -1;
  std::vector<std::string> out_lines;
  std::string err;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Runs `tagflow ARGS` with `input` on stdin.
CommandResult run_tagflow(const std::string& args, const std::string& input) {
  const std::string dir = ::testing::TempDir();
  const std::string tag = std::to_string(::getpid()) + "_" +
                          ::testing::UnitTest::GetInstance()->current_test_info()->name();
  const std::string in_path = dir + "/env_in_" + tag;
  const std::string out_path = dir + "/env_out_" + tag;
  const std::string err_path = dir + "/env_err_" + tag;
  std::ofstream(in_path) << input;
  const std::string command = std::string(TAGFLOW_BIN_DIR) + "/tagflow " + args + " < " + in_path +
                              " > " + out_path + " 2> " + err_path;
  const int status = std::system(command.c_str());
  CommandResult run;
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::stringstream out(slurp(out_path));
  for (std::string line; std::getline(out, line);) run.out_lines.push_back(line);
  run.err = slurp(err_path);
  std::remove(in_path.c_str());
  std::remove(out_path.c_str());
  std::remove(err_path.c_str());
  return run;
}

TEST(EnvCommand, ListNamesEveryEnvironment) {
  const CommandResult run = run_tagflow("env list", "");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::string all;
  for (const std::string& line : run.out_lines) all += line + "\n";
  for (const char* id :
       {"CartPole-v1", "MountainCar-v0", "Acrobot-v1", "Pendulum-v1", "Blackjack-v1",
        "PixelPongNoFrameskip-v0", "PixelPong-v0", "TrafficJunction4-v1", "TrafficJunction10-v1"}) {
    EXPECT_NE(all.find(id), std::string::npos) << id;
  }
  EXPECT_NE(all.find("(1350,)"), std::string::npos);
}

TEST(EnvCommand, StepAnswersEachLineFromTheGivenState) {
  const CommandResult run = run_tagflow("env step --env CartPole-v1",
                                        "{\"state\": [0.01, -0.02, 0.03, 0.04], \"action\": 1}\n\n"
                                        "{\"state\": [2.39, 0.6, 0.0, 0.0], \"action\": 1}\n");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ASSERT_EQ(run.out_lines.size(), 2U);
  const nlohmann::json first = nlohmann::json::parse(run.out_lines[0]);
  const std::vector<double> next = first["next_state"].get<std::vector<double>>();
  const std::vector<double> expected = {0.0096, 0.17467919574755525, 0.0308, -0.24306871796000809};
  ASSERT_EQ(next.size(), 4U);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_NEAR(next[i], expected[i], 1e-12);
  EXPECT_NEAR(first["observation"][1].get<double>(), 0.17467919574755525, 1e-7);
  EXPECT_EQ(first["reward"].get<double>(), 1.0);
  EXPECT_FALSE(first["terminated"].get<bool>());
  EXPECT_FALSE(first["truncated"].get<bool>());
  EXPECT_TRUE(nlohmann::json::parse(run.out_lines[1])["terminated"].get<bool>());
}

TEST(EnvCommand, PendulumTakesANumberOrAnArray) {
  const CommandResult run = run_tagflow("env step --env Pendulum-v1",
                                        "{\"state\": [1.0, 0.5], \"action\": 1.5}\n"
                                        "{\"state\": [1.0, 0.5], \"action\": [1.5]}\n");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ASSERT_EQ(run.out_lines.size(), 2U);
  EXPECT_EQ(run.out_lines[0], run.out_lines[1]);
  const nlohmann::json out = nlohmann::json::parse(run.out_lines[0]);
  EXPECT_NEAR(out["next_state"][0].get<double>(), 1.0678051619302962, 1e-9);
  EXPECT_NEAR(out["reward"].get<double>(), -1.02725, 1e-5);
}

TEST(EnvCommand, AWrongStateLengthNamesTheLineAfterAnsweringThoseBefore) {
  const CommandResult run = run_tagflow("env step --env MountainCar-v0",
                                        "{\"state\": [-0.5, 0.0], \"action\": 2}\n"
                                        "{\"state\": [-0.5], \"action\": 2}\n"
                                        "{\"state\": [-0.5, 0.0], \"action\": 2}\n");
  EXPECT_NE(run.exit_code, 0);
  EXPECT_EQ(run.out_lines.size(), 1U);
  EXPECT_NE(run.err.find("line 2"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("needs 2 values"), std::string::npos) << run.err;
}

TEST(EnvCommand, RejectsActionsOutOfRangeAndMalformedJson) {
  CommandResult run =
      run_tagflow("env step --env Acrobot-v1", "{\"state\": [0, 0, 0, 0], \"action\": 3}\n");
  EXPECT_NE(run.exit_code, 0);
  EXPECT_NE(run.err.find("line 1"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("outside Discrete(3)"), std::string::npos) << run.err;
  run =
      run_tagflow("env step --env Acrobot-v1", "{\"state\": [0, 0, 0, 0], \"action\": 1}\n{oops\n");
  EXPECT_NE(run.exit_code, 0);
  EXPECT_EQ(run.out_lines.size(), 1U);
  EXPECT_NE(run.err.find("line 2: malformed JSON"), std::string::npos) << run.err;
}

// Every refusal names what env step takes: a multi-agent env from `env list` used to be called
// unknown, with a list of known envs that env step refuses too.
TEST(EnvCommand, RejectsUnknownEnvsAndEnvsWithoutStateNamingTheOnesItTakes) {
  for (const std::string id : {"NoSuch-v0", "Blackjack-v1", "TrafficJunction4-v1"}) {
    const CommandResult run = run_tagflow("env step --env " + id, "");
    EXPECT_EQ(run.exit_code, 2) << id;
    EXPECT_NE(run.err.find("'" + id +
                           "' cannot be stepped from a state: env step takes "
                           "CartPole-v1"),
              std::string::npos)
        << run.err;
    EXPECT_EQ(run.err.find("Blackjack-v1,"), std::string::npos) << run.err;
  }
}

}  // namespace

// What a command prints and cannot write is an error (cli/commands.hpp, standard_output_status):
// `tagflow env list > /dev/full` exited 0 with nothing written.
TEST(EnvCommand, AStandardOutputThatCannotBeWrittenIsAnError) {
  if (!std::ifstream("/dev/full")) GTEST_SKIP() << "this machine has no /dev/full";
  const std::string err_path = ::testing::TempDir() + "/env_full_" + std::to_string(::getpid());
  // `env list`; output longer than the stream's buffer, whose write failed before the end
  // (`monitoring metrics`); --help, which writes to standard output as well.
  for (const std::string args : {"env list", "monitoring metrics", "k8s --help"}) {
    SCOPED_TRACE(args);
    const std::string command =
        std::string(TAGFLOW_BIN_DIR) + "/tagflow " + args + " > /dev/full 2> " + err_path;
    const int status = std::system(command.c_str());
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 1);
    EXPECT_EQ(slurp(err_path),
              "tagflow: cannot write to standard output: No space left on device\n");
  }
  std::remove(err_path.c_str());
}

// A reader that closed the pipe: exit 1 and the reason, not a death by SIGPIPE.
TEST(EnvCommand, AClosedPipeIsAFailedWriteNotASignal) {
  const std::string err_path = ::testing::TempDir() + "/env_pipe_" + std::to_string(::getpid());
  const std::string status_path = err_path + ".status";
  // The reader exits before reading anything; the writer's first write finds the pipe closed.
  const std::string command = "bash -c '(sleep 0.5; " + std::string(TAGFLOW_BIN_DIR) +
                              "/tagflow monitoring metrics 2> " + err_path + "; echo $? > " +
                              status_path + ") | true'";
  ASSERT_EQ(std::system(command.c_str()), 0);
  EXPECT_EQ(slurp(status_path), "1\n");
  EXPECT_EQ(slurp(err_path), "tagflow: cannot write to standard output: Broken pipe\n");
  std::remove(err_path.c_str());
  std::remove(status_path.c_str());
}
