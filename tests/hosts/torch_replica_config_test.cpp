// The LibTorch configurations of a replica come from its ReplicaConfig: the env's network shape,
// the cluster seed, the node's params — and a bad param is named with its node.
#include "nodes/kind/torch_replica_config.hpp"

#include <gtest/gtest.h>

namespace tagflow::hosts {
namespace {

const char* const kCluster = R"(cluster: torch
seed: 9
hosts:
  local: {address: 127.0.0.1}
coordinator: {host: local, port: 7600}
nodes:
  sampler: {kind: sampler, host: local, data_port: 7610, params: {env: Acrobot-v1}}
  replay: {kind: replay, host: local, data_port: 7620}
  learner:
    kind: learner
    host: local
    data_port: 7630
    params: {hidden: "32", learning_rate: 0.0005, target_update: 50, eval_max_steps: 200,
             negative_td_weight: 0.5}
  inference: {kind: inference, host: local, data_port: 7640, params: {max_batch: 16}}
  broken: {kind: inference, host: local, data_port: 7650, params: {torchscript: /no/such.pt}}
connections:
  - {from: sampler.observations, to: inference.observations}
  - {from: inference.actions, to: sampler.actions, after: 0}
  - {from: learner.weights, to: inference.weights, after: 0}
  - {from: sampler.transitions, to: replay.transitions}
  - {from: replay.batches, to: learner.batches}
stop: {env_steps: 100}
)";

TEST(TorchReplicaConfig, TheLearnerTakesTheEnvsShapeTheClusterSeedAndItsParams) {
  const cluster::ClusterConfig config = cluster::parse_cluster_config(kCluster, "torch.yaml");
  const ClusterFacts facts = ClusterFacts::of(config);
  const nodes::LearnerConfig learner = learner_config(replica_config(config, facts, "learner"));
  EXPECT_EQ(learner.dqn.network.input_size, 6);  // Acrobot-v1: 6 observations, 3 actions
  EXPECT_EQ(learner.dqn.network.output_size, 3);
  EXPECT_EQ(learner.dqn.network.hidden_sizes, (std::vector<int>{32}));
  EXPECT_DOUBLE_EQ(learner.dqn.learning_rate, 0.0005);
  EXPECT_EQ(learner.dqn.target_update, 50);
  EXPECT_DOUBLE_EQ(learner.dqn.negative_td_weight, 0.5);
  EXPECT_EQ(learner.dqn.seed, 9U);
  EXPECT_EQ(learner.eval_max_steps, 200);
}

TEST(TorchReplicaConfig, InferenceInheritsTheLearnersHiddenSizes) {
  const cluster::ClusterConfig config = cluster::parse_cluster_config(kCluster, "torch.yaml");
  const ClusterFacts facts = ClusterFacts::of(config);
  const nodes::InferenceConfig inference =
      inference_config(replica_config(config, facts, "inference"));
  EXPECT_EQ(inference.network.hidden_sizes, (std::vector<int>{32}));
  EXPECT_EQ(inference.network.input_size, 6);
  EXPECT_EQ(inference.max_batch, 16U);
  EXPECT_EQ(inference.seed, 9U);
}

TEST(TorchReplicaConfig, AMissingTorchScriptFileIsAParamErrorNamingTheNode) {
  const cluster::ClusterConfig config = cluster::parse_cluster_config(kCluster, "torch.yaml");
  const ClusterFacts facts = ClusterFacts::of(config);
  try {
    (void)inference_config(replica_config(config, facts, "broken"));
    FAIL() << "expected ParamError";
  } catch (const nodes::ParamError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("broken"), std::string::npos) << what;
    EXPECT_NE(what.find("torchscript"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace tagflow::hosts
