#include "hosts/actor/replica_spawner.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

#include "actors/actor_system_setup.hpp"
#include "nodes/actor_messages.hpp"
#include "nodes/kind/registry.hpp"

namespace tagflow::hosts {
namespace {

TEST(ReplicaSpawner, SpawnsSamplersAndReplaysFromTheirConfigurationAndNeedsTorchForTheRest) {
  const cluster::ClusterConfig config =
      cluster::load_cluster_config(std::string(TAGFLOW_SOURCE_DIR) + "/configs/local.yaml");
  const ClusterFacts facts = ClusterFacts::of(config);
  auto system_config = actors::make_actor_system_config({false, 1});
  nodes::add_node_message_types(*system_config);
  caf::actor_system system(*system_config);
  std::vector<caf::actor> spawned;
  for (const char* name : {"sampler-0", "replay"}) {
    auto report = std::make_shared<nodes::ReplicaReport>(name, "");
    spawned.push_back(
        spawn_replica(system, {replica_config(config, facts, name), report, nullptr}));
    EXPECT_TRUE(spawned.back()) << name;
  }
  for (const char* name : {"learner", "inference"}) {
    auto report = std::make_shared<nodes::ReplicaReport>(name, "");
    EXPECT_THROW(
        (void)spawn_replica(system, {replica_config(config, facts, name), report, nullptr}),
        std::invalid_argument)
        << name;
  }
  for (const caf::actor& a : spawned) caf::anon_send(a, actors::StopRun{""});
  system.await_all_actors_done();
  EXPECT_EQ(nodes::find_node_kind("replay")->count_unit, "inserts");
}

}  // namespace
}  // namespace tagflow::hosts
