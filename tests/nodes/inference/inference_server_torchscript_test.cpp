// InferenceServer with `torchscript: PATH` (nodes/inference/inference_server.hpp): serves an
// exported policy file instead of the learner's weights.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <set>
#include <string>

#include "nodes/inference/inference_server.hpp"
#include "rl/learning/policy_network.hpp"
#include "rl/learning/torchscript_policy.hpp"
#include "tests/rl/learning/learning_test_util.hpp"

namespace tagflow::nodes {
namespace {

using learning::testing::ScratchDir;

const learning::MlpSpec kSpec{4, {16, 16}, 3};

// Parameters with larger weights than the default init, so greedy actions vary between rows.
std::vector<float> policy_parameters(std::uint64_t seed) {
  std::vector<float> p = learning::init_mlp_parameters(kSpec, seed);
  for (float& v : p) v *= 3.0F;
  return p;
}

InferenceConfig script_config(const std::string& path, std::size_t max_batch) {
  const NodeParams params("inference", {{"torchscript", path},
                                        {"max_batch", std::to_string(max_batch)},
                                        {"hidden", "8"}});  // the file's own layers are served
  return InferenceConfig::from_params(params, 5, 4, 3);
}

ObservationBatchMessage torchscript_request(std::uint32_t source, std::size_t rows, float phase) {
  ObservationBatchMessage m;
  m.source = source;
  m.observation_size = 4;
  for (std::size_t i = 0; i < rows * 4; ++i) {
    m.observations.push_back(20.0F * std::sin(phase + 0.9F * static_cast<float>(i)));
  }
  return m;
}

std::vector<std::int64_t> reference_actions(const std::vector<float>& parameters,
                                            const ObservationBatchMessage& r) {
  learning::PolicyNetwork network(kSpec);
  network.load_weights(learning::WeightsBuffer{1, parameters});
  std::vector<std::int64_t> actions(r.rows());
  network.act(r.observations.data(), static_cast<std::int64_t>(r.rows()), actions.data());
  return actions;
}

std::string param_error(const std::string& path, int observation_size, int num_actions) {
  try {
    (void)InferenceConfig::from_params(NodeParams("inference", {{"torchscript", path}}), 1,
                                       observation_size, num_actions);
  } catch (const ParamError& e) {
    return e.what();
  }
  return {};
}

TEST(InferenceServerTorchScript, ServesTheExportedPolicyWithThePolicyNetworksGreedyActions) {
  const ScratchDir dir("inference_torchscript_serve");
  const std::vector<float> parameters = policy_parameters(31);
  learning::export_torchscript(kSpec, parameters, dir.file("policy.pt"));
  const ObservationBatchMessage a = torchscript_request(0, 24, 0.0F);
  const ObservationBatchMessage b = torchscript_request(1, 13, 1.7F);
  std::vector<std::int64_t> expected = reference_actions(parameters, a);
  const std::vector<std::int64_t> expected_b = reference_actions(parameters, b);
  ASSERT_GT(std::set<std::int64_t>(expected.begin(), expected.end()).size(), 1U)
      << "probe observations should not all choose one action";

  for (const std::size_t max_batch : {64U, 5U}) {
    InferenceServer server(script_config(dir.file("policy.pt"), max_batch));
    EXPECT_TRUE(server.serves_torchscript());
    const auto answers = server.serve({a, b});
    ASSERT_EQ(answers.size(), 2U);
    EXPECT_EQ(answers[0].source, 0U);
    EXPECT_EQ(answers[0].actions, expected);
    EXPECT_EQ(answers[1].source, 1U);
    EXPECT_EQ(answers[1].actions, expected_b);
    EXPECT_EQ(answers[0].weights_version, 0U);
    EXPECT_EQ(server.forward_passes(), max_batch == 64U ? 1U : 8U);  // 37 rows
  }
}

TEST(InferenceServerTorchScript, WeightsMessagesAreIgnoredAndCounted) {
  const ScratchDir dir("inference_torchscript_weights");
  const std::vector<float> parameters = policy_parameters(32);
  learning::export_torchscript(kSpec, parameters, dir.file("policy.pt"));
  InferenceServer server(script_config(dir.file("policy.pt"), 64));
  const ObservationBatchMessage r = torchscript_request(0, 32, 0.3F);
  const auto before = server.serve({r});
  server.on_weights({7, policy_parameters(99)});
  server.on_weights({9, policy_parameters(98)});
  EXPECT_EQ(server.weights_ignored(), 2U);
  EXPECT_EQ(server.weights_version(), 0U);
  EXPECT_EQ(server.serve({r})[0].actions, before[0].actions);
  EXPECT_EQ(before[0].actions, reference_actions(parameters, r));
  // Without torchscript the same weights message is loaded, not ignored.
  InferenceServer learner_weights(
      InferenceConfig::from_params(NodeParams("inference", {{"hidden", "16,16"}}), 5, 4, 3));
  learner_weights.on_weights({7, parameters});
  EXPECT_EQ(learner_weights.weights_ignored(), 0U);
  EXPECT_EQ(learner_weights.weights_version(), 7U);
  EXPECT_EQ(learner_weights.serve({r})[0].actions, before[0].actions);
}

TEST(InferenceServerTorchScript, MissingOrUnreadableFileIsAParamErrorNamingIt) {
  const ScratchDir dir("inference_torchscript_missing");
  const std::string missing = dir.file("nowhere.pt");
  const std::string error = param_error(missing, 4, 3);
  EXPECT_NE(error.find("param 'torchscript'"), std::string::npos) << error;
  EXPECT_NE(error.find(missing), std::string::npos) << error;
  std::ofstream(dir.file("garbage.pt")) << "not a TorchScript archive";
  EXPECT_NE(param_error(dir.file("garbage.pt"), 4, 3).find("garbage.pt"), std::string::npos);
  // A config built in code is checked by the server too.
  InferenceConfig config;
  config.network = kSpec;
  config.torchscript = missing;
  EXPECT_THROW(InferenceServer server(config), ParamError);
}

TEST(InferenceServerTorchScript, ShapesThatDisagreeWithTheEnvAreRefused) {
  const ScratchDir dir("inference_torchscript_shapes");
  learning::export_torchscript(kSpec, policy_parameters(3), dir.file("policy.pt"));
  EXPECT_TRUE(param_error(dir.file("policy.pt"), 4, 3).empty());
  const std::string wide = param_error(dir.file("policy.pt"), 6, 3);
  EXPECT_NE(wide.find("width 6"), std::string::npos) << wide;
  const std::string actions = param_error(dir.file("policy.pt"), 4, 2);
  EXPECT_NE(actions.find("returns 3 scores per observation, the env has 2 actions"),
            std::string::npos)
      << actions;
}

}  // namespace
}  // namespace tagflow::nodes
