#include "nodes/kind/replica_binding.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

#include "nodes/cluster/link_plan.hpp"

namespace tagflow::hosts {
namespace {

class ReplicaBindingTest : public ::testing::Test {
 protected:
  ReplicaBindingTest()
      : config_(
            cluster::load_cluster_config(std::string(TAGFLOW_SOURCE_DIR) + "/configs/local.yaml")),
        facts_(ClusterFacts::of(config_)),
        links_(cluster::plan_links(config_)),
        env_(environment_config()) {}
  static reactors::EnvironmentConfig environment_config() {
    reactors::EnvironmentConfig c;
    c.workers = 1;
    c.start_time_ns = 0;
    return c;
  }
  cluster::ClusterConfig config_;
  ClusterFacts facts_;
  cluster::LinkPlan links_;
  reactors::Environment env_;
};

TEST_F(ReplicaBindingTest, ASamplerBindingHasThePortsOfItsLinksAndItsConfiguredShare) {
  const ReplicaSetup setup = replica_setup(config_, links_, facts_, "sampler-1");
  EXPECT_EQ(setup.config.index, 1);
  auto binding = make_replica(setup, env_);
  EXPECT_EQ(binding->kind().name, "sampler");
  EXPECT_EQ(binding->output("transitions", 0).full_name(), "sampler-1.transitions[0]");
  EXPECT_EQ(binding->input("actions", 0).full_name(), "sampler-1.actions[0]");
  EXPECT_THROW((void)binding->output("batches", 0), std::invalid_argument);
  EXPECT_FALSE(binding->reached_stop_condition());
  const ReplicaResult result = binding->result(std::nullopt);
  EXPECT_EQ(result.name, "sampler-1");
  EXPECT_EQ(result.unit, "env_steps");
  EXPECT_EQ(result.channels.size(), 2U);  // transitions and observations, one channel each
}

TEST_F(ReplicaBindingTest, AReplayBindingReportsItsBatchesChannel) {
  auto binding = make_replica(replica_setup(config_, links_, facts_, "replay"), env_);
  EXPECT_EQ(binding->kind().name, "replay");
  EXPECT_EQ(binding->input("priorities", 0).full_name(), "replay.priorities[0]");
  const ReplicaResult result = binding->result(std::nullopt);
  ASSERT_EQ(result.channels.size(), 1U);
  EXPECT_EQ(result.channels[0].port, "batches");
  EXPECT_EQ(result.channels[0].count, 0U);
}

TEST_F(ReplicaBindingTest, TheTorchFreeFactoryRefusesLearnersAndInferenceServers) {
  for (const char* name : {"learner", "inference"}) {
    try {
      (void)make_replica(replica_setup(config_, links_, facts_, name), env_);
      FAIL() << name;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("LibTorch"), std::string::npos) << e.what();
    }
  }
}

TEST_F(ReplicaBindingTest, NoReplicaStoppedOnItsOwnSoTheReasonIsTheTimeoutOrNothing) {
  std::vector<std::unique_ptr<ReplicaBinding>> replicas;
  replicas.push_back(make_replica(replica_setup(config_, links_, facts_, "replay"), env_));
  EXPECT_EQ(stop_reason(replicas, false), "");
  EXPECT_EQ(stop_reason(replicas, true), "seconds");
}

}  // namespace
}  // namespace tagflow::hosts
