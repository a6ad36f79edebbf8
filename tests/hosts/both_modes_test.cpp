// The same cluster file gives the same replicas in both modes: for every replica of the shipped
// files, the configuration actor mode spawned its actor from (hosts/actor/replica_host.hpp) equals
// the one reactor mode builds its reactor from (nodes/kind/replica_binding.hpp), field by
// field, including the LibTorch configurations of learners and inference servers.
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include <caf/all.hpp>

#include "actors/actor_system_setup.hpp"
#include "hosts/actor/replica_host.hpp"
#include "nodes/actor_messages.hpp"
#include "nodes/cluster/link_plan.hpp"
#include "nodes/kind/replica_binding.hpp"
#include "nodes/kind/torch_replica_config.hpp"

namespace tagflow::hosts {
namespace {

std::string describe_torch(const ReplicaConfig& r) {
  std::ostringstream out;
  if (r.kind->name == "learner") {
    const nodes::LearnerConfig c = learner_config(r);
    out << "hidden=" << c.dqn.network.hidden_sizes.size() << " lr=" << c.dqn.learning_rate
        << " gamma=" << c.gamma << " target=" << c.dqn.target_update << " seed=" << c.dqn.seed
        << " eval_every=" << c.eval_every << " eval_max_steps=" << c.eval_max_steps;
  }
  if (r.kind->name == "inference") {
    const nodes::InferenceConfig c = inference_config(r);
    out << "inputs=" << c.network.input_size << " max_batch=" << c.max_batch
        << " max_wait=" << c.max_wait.count() << " seed=" << c.seed;
  }
  return out.str();
}

void expect_same_replicas_in_both_modes(const std::string& file) {
  const cluster::ClusterConfig config =
      cluster::load_cluster_config(std::string(TAGFLOW_SOURCE_DIR) + "/" + file);
  const ClusterFacts facts = ClusterFacts::of(config);
  const cluster::LinkPlan links = cluster::plan_links(config);

  auto system_config = actors::make_actor_system_config({false, 2});
  nodes::add_node_message_types(*system_config);
  caf::actor_system system(*system_config);
  ReplicaHost host(system, config, facts);
  std::size_t compared = 0;
  for (const cluster::NodeConfig& node : config.nodes) {
    for (int i = 0; i < node.replicas; ++i) {
      const std::string name = cluster::replica_name(node, i);
      const ReplicaConfig& actor = host.spawn(name).config;
      const ReplicaConfig reactor = replica_setup(config, links, facts, name).config;
      EXPECT_EQ(actor.describe(), reactor.describe()) << file << ": " << name;
      EXPECT_EQ(describe_torch(actor), describe_torch(reactor)) << file << ": " << name;
      ++compared;
    }
  }
  EXPECT_GE(compared, 5U) << file;
  for (const HostedReplica& r : host.replicas()) caf::anon_send(r.handle, actors::StopRun{""});
  system.await_all_actors_done();
}

TEST(BothModes, TheLocalDemoFileGivesIdenticalReplicaConfigurations) {
  expect_same_replicas_in_both_modes("configs/local.yaml");
}

TEST(BothModes, ThePixelFileGivesIdenticalReplicaConfigurations) {
  expect_same_replicas_in_both_modes("configs/atari.yaml");
}

TEST(BothModes, TheTwoHostFileGivesIdenticalReplicaConfigurations) {
  expect_same_replicas_in_both_modes("configs/two-host.yaml");
}

}  // namespace
}  // namespace tagflow::hosts
