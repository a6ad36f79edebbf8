// `torchscript: PATH` through a whole cluster file: the in-process cluster of a shortened
// configs/local.yaml acts with the scripted policy, not with the learner's weights.
#include <gtest/gtest.h>

#include "hosts/reactor/single_process_cluster.hpp"
#include "nodes/node_params.hpp"
#include "rl/learning/torchscript_policy.hpp"
#include "tests/rl/learning/learning_test_util.hpp"
#include "tests/support/cluster_files.hpp"

namespace tagflow::nodes {
namespace {

using hosts::run_single_process_cluster;
using hosts::RunSummary;

using learning::testing::ScratchDir;

// local.yaml for `env_steps` steps with greedy samplers (ε = 0) and inference params added.
cluster::ClusterConfig greedy_cluster(std::int64_t env_steps, const std::string& inference) {
  testing::LocalClusterOptions options;
  options.stop = "env_steps: " + std::to_string(env_steps);
  options.params["sampler"] = "epsilon_start: 0.0, epsilon_end: 0.0";
  options.params["inference"] = inference;
  return cluster::parse_cluster_config(testing::local_cluster_yaml(options),
                                       "torchscript-local.yaml");
}

// A CartPole policy (4 → 8 → `actions`) whose scores are its output biases: it always picks
// action `always`.
void export_constant_policy(const std::string& path, int actions, int always) {
  const learning::MlpSpec spec{4, {8}, actions};
  std::vector<float> parameters(static_cast<std::size_t>(spec.parameter_count()), 0.0F);
  const learning::LayerSlice out = learning::layer_slices(spec).back();
  parameters[static_cast<std::size_t>(out.bias_offset + always)] = 1.0F;
  learning::export_torchscript(spec, parameters, path);
}

TEST(InferenceTorchScriptCluster, SamplersActWithTheScriptedPolicy) {
  const ScratchDir dir("inference_torchscript_cluster");
  export_constant_policy(dir.file("left.pt"), 2, 0);
  const std::string param = "torchscript: \"" + dir.file("left.pt") + "\"";
  const RunSummary left = run_single_process_cluster(greedy_cluster(1600, param), {});
  EXPECT_EQ(left.env_steps, 1600);
  EXPECT_GT(left.updates, 0);  // the learner still learns and publishes; inference ignores it
  // Always pushing left ends every CartPole episode within a few steps.
  std::size_t episodes = 0;
  for (const auto& returns : left.episode_returns) {
    for (const double r : returns) EXPECT_LT(r, 15.0);
    episodes += returns.size();
  }
  EXPECT_GT(episodes, 100U);
  // The same file and seed again: the same digest; a policy that always pushes right differs.
  EXPECT_EQ(run_single_process_cluster(greedy_cluster(1600, param), {}).digest, left.digest);
  export_constant_policy(dir.file("right.pt"), 2, 1);
  const RunSummary right = run_single_process_cluster(
      greedy_cluster(1600, "torchscript: \"" + dir.file("right.pt") + "\""), {});
  EXPECT_NE(right.digest, left.digest);
}

TEST(InferenceTorchScriptCluster, APolicyForAnotherActionCountIsANamedParamError) {
  const ScratchDir dir("inference_torchscript_cluster_shape");
  export_constant_policy(dir.file("three.pt"), 3, 0);
  try {
    (void)run_single_process_cluster(
        greedy_cluster(160, "torchscript: \"" + dir.file("three.pt") + "\""), {});
    FAIL() << "a 3-action policy was accepted for CartPole";
  } catch (const ParamError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("node 'inference': param 'torchscript'"), std::string::npos) << what;
    EXPECT_NE(what.find("the env has 2 actions"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace tagflow::nodes
