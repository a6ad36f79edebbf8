// The LibTorch half of actor mode's spawning (the learner and inference kinds' actor(), installed
// in the torch test binary as in tagflow-torch): learners and inference servers of a cluster file
// become real actors configured from their ReplicaConfig; a bad param fails before any actor runs.
#include "hosts/actor/replica_spawner.hpp"

#include <gtest/gtest.h>

#include "actors/actor_system_setup.hpp"
#include "nodes/actor_messages.hpp"

namespace tagflow::hosts {
namespace {

TEST(TorchKindActors, SpawnsTheLearnerAndInferenceOfTheDemoFile) {
  const cluster::ClusterConfig config =
      cluster::load_cluster_config(std::string(TAGFLOW_SOURCE_DIR) + "/configs/local.yaml");
  const ClusterFacts facts = ClusterFacts::of(config);
  auto system_config = actors::make_actor_system_config({false, 2});
  nodes::add_node_message_types(*system_config);
  caf::actor_system system(*system_config);
  auto learner_report = std::make_shared<nodes::ReplicaReport>("learner", "learner");
  auto inference_report = std::make_shared<nodes::ReplicaReport>("inference", "inference");
  const caf::actor learner =
      spawn_replica(system, {replica_config(config, facts, "learner"), learner_report, nullptr});
  const caf::actor inference = spawn_replica(
      system, {replica_config(config, facts, "inference"), inference_report, nullptr});
  ASSERT_TRUE(learner);
  ASSERT_TRUE(inference);
  caf::anon_send(learner, actors::StopRun{"target_return"});
  caf::anon_send(inference, actors::StopRun{""});
  system.await_all_actors_done();
  std::lock_guard<std::mutex> lock(learner_report->mutex);
  EXPECT_EQ(learner_report->stop_reason, "target_return");
  ASSERT_TRUE(learner_report->final_weights.has_value());
  EXPECT_EQ(learner_report->final_weights->version, 0U);
  // 4 inputs, 64, 64, 2 outputs: the demo's CartPole network, weights and biases.
  EXPECT_EQ(learner_report->final_weights->values.size(),
            static_cast<std::size_t>(4 * 64 + 64 + 64 * 64 + 64 + 64 * 2 + 2));
}

TEST(TorchKindActors, ABadTorchScriptParamFailsBeforeAnyActorRuns) {
  cluster::ClusterConfig config =
      cluster::load_cluster_config(std::string(TAGFLOW_SOURCE_DIR) + "/configs/local.yaml");
  for (cluster::NodeConfig& node : config.nodes) {
    if (node.name == "inference") node.params["torchscript"] = "/no/such/policy.pt";
  }
  const ClusterFacts facts = ClusterFacts::of(config);
  auto system_config = actors::make_actor_system_config({false, 1});
  nodes::add_node_message_types(*system_config);
  caf::actor_system system(*system_config);
  auto report = std::make_shared<nodes::ReplicaReport>("inference", "inference");
  EXPECT_THROW(
      (void)spawn_replica(system, {replica_config(config, facts, "inference"), report, nullptr}),
      nodes::ParamError);
}

}  // namespace
}  // namespace tagflow::hosts
