// Tests of nodes/cluster/link_plan.hpp: the replica pairs and channel numbers every placement
// uses, and the federation plan following them.
#include "nodes/cluster/link_plan.hpp"

#include <gtest/gtest.h>

#include "nodes/cluster/federation_plan.hpp"

namespace tagflow::cluster {
namespace {

constexpr const char* kLinkedCluster = R"(cluster: t
nodes:
  sampler: {kind: sampler, replicas: 2, data_port: 7000}
  inference: {kind: inference, replicas: 2, data_port: 7100}
  replay: {kind: replay, data_port: 7200}
  learner: {kind: learner, data_port: 7300}
connections:
  - {from: sampler.observations, to: inference.observations}
  - {from: inference.actions, to: sampler.actions, after: 0}
  - {from: sampler.transitions, to: replay.transitions}
  - {from: replay.batches, to: learner.batches}
  - {from: learner.weights, to: inference.weights, after: 1ms}
stop: {env_steps: 1000}
)";

std::string describe(const Link& l) {
  return l.from.replica + "." + l.from.port + "[" + std::to_string(l.from.channel) + "]->" +
         l.to.replica + "." + l.to.port + "[" + std::to_string(l.to.channel) + "]";
}

TEST(LinkPlan, PairsEqualCountsAndFansOneToManyInConnectionOrder) {
  const ClusterConfig config = parse_cluster_config(kLinkedCluster, "l.yaml");
  const LinkPlan plan = plan_links(config);
  std::vector<std::string> got;
  for (const Link& l : plan.links) got.push_back(describe(l));
  EXPECT_EQ(got, (std::vector<std::string>{
                     "sampler-0.observations[0]->inference-0.observations[0]",
                     "sampler-1.observations[0]->inference-1.observations[0]",
                     "inference-0.actions[0]->sampler-0.actions[0]",
                     "inference-1.actions[0]->sampler-1.actions[0]",
                     "sampler-0.transitions[0]->replay.transitions[0]",
                     "sampler-1.transitions[0]->replay.transitions[1]",
                     "replay.batches[0]->learner.batches[0]",
                     "learner.weights[0]->inference-0.weights[0]",
                     "learner.weights[1]->inference-1.weights[0]",
                 }));
  EXPECT_EQ(plan.links[2].connection, 1U);
  EXPECT_EQ(plan.links[2].after, std::chrono::nanoseconds(0));
  EXPECT_FALSE(plan.links[0].after.has_value());
  EXPECT_EQ(plan.input_width("replay", "transitions"), 2U);
  EXPECT_EQ(plan.output_width("learner", "weights"), 2U);
  EXPECT_EQ(plan.output_width("learner", "priorities"), 0U);
  EXPECT_EQ(plan.input_width("inference-1", "observations"), 1U);
}

TEST(LinkPlan, TheFederationLinksExactlyThePairsOfThePlan) {
  const coordinator::FederationSpec spec =
      federation_spec(parse_cluster_config(kLinkedCluster, "l.yaml"));
  const auto upstreams = [&spec](const std::string& id) {
    std::vector<std::string> out;
    for (const auto& link : spec.find(id)->upstreams) out.push_back(link.federate);
    return out;
  };
  // Replica i of sampler talks to replica i of inference only.
  EXPECT_EQ(upstreams("inference-0"), (std::vector<std::string>{"learner", "sampler-0"}));
  EXPECT_EQ(upstreams("sampler-1"), (std::vector<std::string>{"inference-1"}));
  EXPECT_EQ(upstreams("replay"), (std::vector<std::string>{"sampler-0", "sampler-1"}));
}

TEST(LinkPlan, UnequalReplicaCountsAboveOneAreRefusedWithTheConnection) {
  std::string text = kLinkedCluster;
  text.replace(text.find("replicas: 2, data_port: 7100"), 28, "replicas: 3, data_port: 7100");
  try {
    (void)parse_cluster_config(text, "l.yaml");
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "connections[0]");
    EXPECT_EQ(e.line(), 8);
    EXPECT_NE(std::string(e.what()).find("2 replicas of 'sampler'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tagflow::cluster
