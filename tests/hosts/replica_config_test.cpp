#include "nodes/kind/replica_config.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "nodes/kind/registry.hpp"

namespace tagflow::hosts {
namespace {

// Three samplers over two groups, two replay replicas with checkpoints, a learner with an
// evaluation step cap: every rule replica_config() settles shows up in one file.
const char* const kCluster = R"(cluster: rules
seed: 7
hosts:
  local: {address: 127.0.0.1}
coordinator: {host: local, port: 7600}
nodes:
  sampler:
    kind: sampler
    replicas: 2
    host: local
    data_port: 7610
    params: {env: CartPole-v1, num_envs: 4, policy: inference}
  replay:
    kind: replay
    replicas: 2
    host: local
    data_port: 7620
    params: {min_size: 100, checkpoint_dir: ckpt, checkpoint_every: 500}
  learner:
    kind: learner
    host: local
    data_port: 7630
    params: {hidden: "32,16", eval_episodes: 3, eval_max_steps: 50}
  inference:
    kind: inference
    host: local
    data_port: 7640
  extra:
    kind: sampler
    host: local
    data_port: 7650
    params: {env: CartPole-v1, num_envs: 2, policy: local, hidden: "8"}
connections:
  - {from: sampler.observations, to: inference.observations}
  - {from: inference.actions, to: sampler.actions, after: 0}
  - {from: sampler.transitions, to: replay.transitions}
  - {from: extra.transitions, to: replay.transitions}
  - {from: replay.batches, to: learner.batches}
  - {from: learner.priorities, to: replay.priorities, after: 0}
  - {from: learner.weights, to: inference.weights, after: 0}
stop: {target_return: 450, env_steps: 1000}
)";

class ReplicaConfigTest : public ::testing::Test {
 protected:
  ReplicaConfigTest()
      : config_(cluster::parse_cluster_config(kCluster, "rules.yaml")),
        facts_(ClusterFacts::of(config_)) {}
  ReplicaConfig of(const std::string& name) const { return replica_config(config_, facts_, name); }

  cluster::ClusterConfig config_;
  ClusterFacts facts_;
};

TEST_F(ReplicaConfigTest, SeedsFollowTheGroupNumberInFileOrderAndTheReplicaIndex) {
  EXPECT_EQ(of("sampler-0").seed, 7 * 1000003ULL + 1000);
  EXPECT_EQ(of("sampler-1").seed, 7 * 1000003ULL + 1001);
  EXPECT_EQ(of("replay-1").seed, 7 * 1000003ULL + 2001);
  EXPECT_EQ(of("extra").seed, 7 * 1000003ULL + 5000);
  EXPECT_EQ(of("sampler-1").sampler->seed, of("sampler-1").seed);
  EXPECT_EQ(of("replay-1").replay->seed, of("replay-1").seed);
  EXPECT_EQ(of("learner").network_seed, 7U);
  EXPECT_EQ(of("inference").network_seed, 7U);
}

TEST_F(ReplicaConfigTest, EverySamplerGetsItsShareOfTheEnvStepsRoundedUp) {
  EXPECT_EQ(facts_.sampler_count, 3U);
  for (const char* name : {"sampler-0", "sampler-1", "extra"}) {
    EXPECT_EQ(of(name).step_limit, 334) << name;  // ceil(1000 / 3)
  }
  EXPECT_EQ(of("replay-0").step_limit, -1);
}

// `extra` acts with a local policy no learner's weights reach, so its own network stands; fed the
// learner's weights, it must be the learner's (ReplicaParamsCheck tests the refusal's line).
TEST_F(ReplicaConfigTest, SamplersAndInferenceTakeTheLearnersHiddenSizesUnlessTheyHaveTheirOwn) {
  EXPECT_EQ(of("sampler-0").sampler->hidden, (std::vector<int>{32, 16}));
  EXPECT_EQ(of("extra").sampler->hidden, (std::vector<int>{8}));
  EXPECT_EQ(of("inference").params.get_string("hidden", ""), "32,16");
  std::string fed = kCluster;
  fed.replace(fed.find("stop:"), 5,
              "  - {from: learner.weights, to: extra.weights, after: 0}\nstop:");
  const cluster::ClusterConfig config = cluster::parse_cluster_config(fed, "rules.yaml");
  EXPECT_THROW((void)replica_config(config, ClusterFacts::of(config), "extra"), nodes::ParamError);
}

TEST_F(ReplicaConfigTest, EveryReplayReplicaCheckpointsToItsOwnFile) {
  EXPECT_EQ(of("replay-0").checkpoint_path, "ckpt/replay-0.ckpt");
  EXPECT_EQ(of("replay-1").checkpoint_path, "ckpt/replay-1.ckpt");
  EXPECT_EQ(of("replay-0").replay->checkpoint_every, 500U);
}

TEST_F(ReplicaConfigTest, TheLearnersEvaluationKeepsItsStepCapAndAFixedSeed) {
  const ReplicaConfig learner = of("learner");
  ASSERT_TRUE(learner.evaluation.has_value());
  EXPECT_EQ(learner.evaluation->env_id, "CartPole-v1");
  EXPECT_EQ(learner.evaluation->hidden, (std::vector<int>{32, 16}));
  EXPECT_EQ(learner.evaluation->episodes, 3);
  EXPECT_EQ(learner.evaluation->max_steps, 50);
  EXPECT_EQ(learner.evaluation->seed, 7U + 424242U);
  EXPECT_EQ(learner.target_return, 450.0);
  EXPECT_EQ(learner.observation_size, 4);
  EXPECT_EQ(learner.num_actions, 2);
}

TEST_F(ReplicaConfigTest, AJoiningSamplerIsConfiguredLikeReplicaKOfItsGroup) {
  const ReplicaConfig joined = of("sampler-5");
  EXPECT_EQ(joined.kind->name, "sampler");
  EXPECT_EQ(joined.index, 5);
  EXPECT_EQ(joined.seed, 7 * 1000003ULL + 1005);
  EXPECT_EQ(joined.sampler->index, 5U);
}

TEST_F(ReplicaConfigTest, ANameThatIsNoReplicaIsAnError) {
  EXPECT_THROW((void)of("replay-7"), std::invalid_argument);  // only samplers join
  EXPECT_THROW((void)of("nobody"), std::invalid_argument);
  EXPECT_THROW((void)of("sampler-x"), std::invalid_argument);
  EXPECT_THROW((void)of("sampler-2x"), std::invalid_argument);
}

TEST_F(ReplicaConfigTest, DescribeNamesEverySettledField) {
  const std::string text = of("replay-1").describe();
  for (const char* field :
       {"seed=", "replay.capacity=", "replay.seed=", "checkpoint_path=ckpt/replay-1.ckpt"}) {
    EXPECT_NE(text.find(field), std::string::npos) << field << " missing from\n" << text;
  }
  EXPECT_NE(of("replay-0").describe(), text);
}

TEST(StopReason, TheLearnersTargetWinsOverEnvStepsOverSeconds) {
  EXPECT_EQ(stop_reason({"", "env_steps", "target_return"}, true), "target_return");
  EXPECT_EQ(stop_reason({"env_steps", ""}, true), "env_steps");
  EXPECT_EQ(stop_reason({"", ""}, true), "seconds");
  EXPECT_EQ(stop_reason({"seconds", ""}, false), "seconds");
  EXPECT_EQ(stop_reason({"", "left"}, false), "");
  // A signal (actor mode) is the reason only when nothing else stopped the run.
  EXPECT_EQ(stop_reason({"signal", ""}, false), "signal");
  EXPECT_EQ(stop_reason({"signal", "env_steps"}, false), "env_steps");
  EXPECT_EQ(stop_reason({"signal", ""}, true), "seconds");
  EXPECT_EQ(nodes::find_node_kind("learner")->own_stop_reason, "target_return");
  EXPECT_EQ(nodes::find_node_kind("sampler")->own_stop_reason, "env_steps");
  EXPECT_EQ(nodes::find_node_kind("replay")->own_stop_reason, "");
}

}  // namespace
}  // namespace tagflow::hosts
