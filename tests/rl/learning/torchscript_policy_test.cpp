#include "rl/learning/torchscript_policy.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>

#include "rl/learning/dqn_learner.hpp"
#include "tests/rl/learning/learning_test_util.hpp"
#include "tests/support/python_torch.hpp"

namespace tagflow::learning {
namespace {

using testing::ScratchDir;
using testing::synthetic_batch;

using tagflow::testing::python_with_torch;

std::string read_text(const std::string& path) {
  std::ifstream file(path);
  return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

std::vector<std::int64_t> parse_actions(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::int64_t> actions;
  std::int64_t a = 0;
  while (in >> a) actions.push_back(a);
  return actions;
}

DqnLearner trained_learner() {
  DqnConfig config;
  config.network = MlpSpec{4, {32, 16}, 3};
  config.seed = 21;
  DqnLearner learner(config);
  for (int i = 0; i < 40; ++i) (void)learner.update(synthetic_batch(4, 3, 32, 500 + i, 0.9F));
  return learner;
}

TEST(TorchScriptPolicy, ExportedPolicyGivesTheLearnersScoresAndActions) {
  const ScratchDir dir("torchscript_export");
  const DqnLearner learner = trained_learner();
  export_torchscript(learner.config().network, learner.weights().values, dir.file("policy.pt"));
  TorchScriptPolicy policy(dir.file("policy.pt"));
  const TransitionBatch probe = synthetic_batch(4, 3, 64, 77, 0.0F);
  const std::vector<float> scores = policy.scores(probe.observations.data(), 64, 4);
  std::vector<float> expected(64 * 3);
  learner.q_values(probe.observations.data(), 64, expected.data());
  ASSERT_EQ(scores.size(), expected.size());
  for (std::size_t i = 0; i < scores.size(); ++i) EXPECT_NEAR(scores[i], expected[i], 1e-5);
  const std::vector<std::int64_t> actions = policy.act(probe.observations.data(), 64, 4);
  for (std::int64_t i = 0; i < 64; ++i) {
    EXPECT_EQ(actions[static_cast<std::size_t>(i)],
              learner.greedy_action(probe.observations.data() + i * 4));
  }
}

TEST(TorchScriptPolicy, LoadingAMissingOrBrokenFileThrowsTorchScriptError) {
  const ScratchDir dir("torchscript_broken");
  EXPECT_THROW(TorchScriptPolicy(dir.file("missing.pt")), TorchScriptError);
  std::ofstream(dir.file("broken.pt")) << "not a zip archive";
  EXPECT_THROW(TorchScriptPolicy(dir.file("broken.pt")), TorchScriptError);
  EXPECT_THROW(export_torchscript(MlpSpec{4, {8}, 2}, std::vector<float>(3), dir.file("x.pt")),
               std::invalid_argument);
}

// A policy scripted and saved by PyTorch in Python must load here and pick the same actions.
TEST(TorchScriptPolicy, PolicySavedFromPythonLoadsAndGivesTheSameActions) {
  const std::string python = python_with_torch();
  if (python.empty()) {
    GTEST_SKIP() << "python3 cannot import torch (install Debian's python3-torch to run this)";
  }
  const ScratchDir dir("torchscript_python");
  const std::string script = dir.file("save_policy.py");
  std::ofstream(script) << R"(import struct, sys
import torch
torch.manual_seed(3)
model = torch.nn.Sequential(torch.nn.Linear(6, 24), torch.nn.ReLU(), torch.nn.Linear(24, 4))
torch.jit.script(model).save(sys.argv[1])
x = torch.randn(50, 6)
with open(sys.argv[2], "wb") as f:
    f.write(struct.pack("300f", *x.reshape(-1).tolist()))
with open(sys.argv[3], "w") as f:
    f.write(" ".join(str(a) for a in model(x).argmax(1).tolist()))
)";
  const std::string command = python + " " + script + " " + dir.file("py_policy.pt") + " " +
                              dir.file("obs.bin") + " " + dir.file("actions.txt");
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  std::vector<float> observations(300);
  std::ifstream(dir.file("obs.bin"), std::ios::binary)
      .read(reinterpret_cast<char*>(observations.data()), 300 * sizeof(float));
  const std::vector<std::int64_t> expected = parse_actions(read_text(dir.file("actions.txt")));
  ASSERT_EQ(expected.size(), 50U);
  TorchScriptPolicy policy(dir.file("py_policy.pt"));
  EXPECT_EQ(policy.act(observations.data(), 50, 6), expected);
}

// The other direction: Python loads a policy exported here and acts like the learner.
TEST(TorchScriptPolicy, PolicyExportedHereLoadsInPythonAndGivesTheSameActions) {
  const std::string python = python_with_torch();
  if (python.empty()) {
    GTEST_SKIP() << "python3 cannot import torch (install Debian's python3-torch to run this)";
  }
  const ScratchDir dir("torchscript_to_python");
  const DqnLearner learner = trained_learner();
  export_torchscript(learner.config().network, learner.weights().values, dir.file("policy.pt"));
  const TransitionBatch probe = synthetic_batch(4, 3, 40, 88, 0.0F);
  std::ofstream(dir.file("obs.bin"), std::ios::binary)
      .write(reinterpret_cast<const char*>(probe.observations.data()), 160 * sizeof(float));
  const std::string script = dir.file("act.py");
  std::ofstream(script) << R"(import struct, sys
import torch
policy = torch.jit.load(sys.argv[1])
with open(sys.argv[2], "rb") as f:
    x = torch.tensor(struct.unpack("160f", f.read())).reshape(40, 4)
with open(sys.argv[3], "w") as f:
    f.write(" ".join(str(a) for a in policy(x).argmax(1).tolist()))
)";
  const std::string command = python + " " + script + " " + dir.file("policy.pt") + " " +
                              dir.file("obs.bin") + " " + dir.file("actions.txt");
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  const std::vector<std::int64_t> actions = parse_actions(read_text(dir.file("actions.txt")));
  ASSERT_EQ(actions.size(), 40U);
  for (std::size_t i = 0; i < 40; ++i) {
    EXPECT_EQ(actions[i], learner.greedy_action(probe.observations.data() + i * 4)) << i;
  }
}

}  // namespace
}  // namespace tagflow::learning
