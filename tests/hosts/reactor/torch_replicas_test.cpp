#include "nodes/kind/replica_binding.hpp"

#include <gtest/gtest.h>

#include <map>
#include <stdexcept>

#include "nodes/cluster/link_plan.hpp"

namespace tagflow::hosts {
namespace {

// The demo file's replicas, built into one environment that is never run.
class TorchReplicas : public ::testing::Test {
 protected:
  TorchReplicas()
      : config_(
            cluster::load_cluster_config(std::string(TAGFLOW_SOURCE_DIR) + "/configs/local.yaml")),
        facts_(ClusterFacts::of(config_)),
        links_(cluster::plan_links(config_)),
        env_(unstarted()) {}
  static reactors::EnvironmentConfig unstarted() {
    reactors::EnvironmentConfig c;
    c.start_time_ns = 0;
    return c;
  }
  std::unique_ptr<ReplicaBinding> build(const std::string& name) {
    return make_replica(replica_setup(config_, links_, facts_, name), env_);
  }
  cluster::ClusterConfig config_;
  ClusterFacts facts_;
  cluster::LinkPlan links_;
  reactors::Environment env_;
};

TEST_F(TorchReplicas, BuildsEveryKindOfTheDemoFileWithThePortsOfItsLinks) {
  std::map<std::string, std::unique_ptr<ReplicaBinding>> built;
  for (const char* name : {"sampler-0", "replay", "learner", "inference"}) {
    built[name] = build(name);
  }
  EXPECT_EQ(built["learner"]->kind().name, "learner");
  EXPECT_EQ(built["learner"]->output("weights", 0).full_name(), "learner.weights[0]");
  EXPECT_EQ(built["inference"]->input("observations", 1).full_name(), "inference.observations[1]");
  EXPECT_THROW((void)built["inference"]->output("weights", 0), std::invalid_argument);
}

TEST_F(TorchReplicas, ALearnerThatNeverReachedItsTargetIsEvaluatedOnceAtTheEnd) {
  auto learner = build("learner");
  const ReplicaResult result = learner->result(std::nullopt);
  EXPECT_EQ(result.unit, "updates");
  EXPECT_EQ(result.updates, 0);
  EXPECT_FALSE(result.target_reached);
  ASSERT_TRUE(result.mean_return.has_value());
  EXPECT_GT(*result.mean_return, 0.0);  // every CartPole step pays 1
  EXPECT_TRUE(result.final_weights_hash.has_value());
  EXPECT_EQ(result.channels.size(), 2U);  // priorities and weights, one channel each
}

}  // namespace
}  // namespace tagflow::hosts
