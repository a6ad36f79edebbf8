#include "hosts/actor/actor_wiring.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

namespace tagflow::hosts {
namespace {

const char* const kCluster = R"(cluster: wiring
seed: 1
hosts:
  local: {address: 127.0.0.1}
coordinator: {host: local, port: 7600}
nodes:
  sampler: {kind: sampler, replicas: 2, host: local, data_port: 7610}
  replay: {kind: replay, host: local, data_port: 7620}
  learner: {kind: learner, host: local, data_port: 7630}
  inference: {kind: inference, host: local, data_port: 7640}
connections:
  - {from: sampler.observations, to: inference.observations}
  - {from: inference.actions, to: sampler.actions, after: 0}
  - {from: sampler.transitions, to: replay.transitions}
  - {from: replay.batches, to: learner.batches}
  - {from: learner.priorities, to: replay.priorities, after: 0}
  - {from: learner.weights, to: inference.weights, after: 0}
  - {from: learner.weights, to: sampler.weights, after: 0}
stop: {env_steps: 1000}
)";

bool has(const std::vector<WiringStep>& steps, const WiringStep& want) {
  return std::any_of(steps.begin(), steps.end(), [&](const WiringStep& s) {
    return s.initiator == want.initiator && s.port == want.port && s.peer == want.peer;
  });
}

TEST(ActorWiring, SendersOfferTheirOutputsButSamplersStartEveryLinkOfTheirOwn) {
  const cluster::ClusterConfig config = cluster::parse_cluster_config(kCluster, "wiring.yaml");
  const cluster::LinkPlan links = cluster::plan_links(config);
  const std::vector<WiringStep> steps = plan_wiring(config, links);
  // Every link but the actions replies is started exactly once.
  EXPECT_EQ(steps.size(), links.links.size() - 2);
  EXPECT_TRUE(has(steps, {"sampler-1", "observations", "inference"}));
  EXPECT_TRUE(has(steps, {"sampler-0", "transitions", "replay"}));
  EXPECT_TRUE(has(steps, {"replay", "batches", "learner"}));
  EXPECT_TRUE(has(steps, {"learner", "weights", "inference"}));
  // A sampler subscribes to weights itself (so a joining sampler needs nobody else's wiring).
  EXPECT_TRUE(has(steps, {"sampler-0", "weights", "learner"}));
  EXPECT_FALSE(has(steps, {"learner", "weights", "sampler-0"}));
  for (const WiringStep& s : steps) EXPECT_NE(s.port, "actions") << s.initiator;
}

TEST(ActorWiring, AJoiningSamplerHasTheKindOfItsGroupAndStrangersHaveNone) {
  const cluster::ClusterConfig config = cluster::parse_cluster_config(kCluster, "wiring.yaml");
  EXPECT_EQ(replica_kind(config, "replay").name, "replay");
  EXPECT_EQ(replica_kind(config, "sampler-7").name, "sampler");
  EXPECT_THROW((void)replica_kind(config, "stranger"), std::invalid_argument);
  EXPECT_THROW((void)replica_kind(config, "learner-2"), std::invalid_argument);
}

}  // namespace
}  // namespace tagflow::hosts
