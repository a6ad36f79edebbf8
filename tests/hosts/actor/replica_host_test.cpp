// ReplicaHost with real sampler and replay actors in one actor system: spawning from the
// replicas' configurations, wiring, waiting for the stop flood, results and the stop reason.
#include "hosts/actor/replica_host.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <stdexcept>

#include "actors/actor_system_setup.hpp"
#include "hosts/actor/actor_wiring.hpp"
#include "nodes/actor_messages.hpp"

namespace tagflow::hosts {
namespace {

const char* const kCluster = R"(cluster: host
mode: actor
seed: 5
hosts:
  local: {address: 127.0.0.1}
coordinator: {host: local, port: 7600}
nodes:
  sampler:
    kind: sampler
    replicas: 2
    host: local
    data_port: 7610
    params: {env: CartPole-v1, num_envs: 2, policy: local}
  replay:
    kind: replay
    host: local
    data_port: 7620
    params: {min_size: 1000}
  learner: {kind: learner, host: local, data_port: 7630}
connections:
  - {from: sampler.transitions, to: replay.transitions}
  - {from: replay.batches, to: learner.batches}
  - {from: learner.priorities, to: replay.priorities, after: 0}
  - {from: learner.weights, to: sampler.weights, after: 0}
stop: {env_steps: 80, seconds: 60}
)";

class ReplicaHostTest : public ::testing::Test {
 protected:
  ReplicaHostTest()
      : config_(cluster::parse_cluster_config(kCluster, "host.yaml")),
        facts_(ClusterFacts::of(config_)),
        system_config_(make_config()),
        system_(*system_config_) {}
  static std::unique_ptr<caf::actor_system_config> make_config() {
    auto config = actors::make_actor_system_config({false, 2});
    nodes::add_node_message_types(*config);
    return config;
  }
  cluster::ClusterConfig config_;
  ClusterFacts facts_;
  std::unique_ptr<caf::actor_system_config> system_config_;
  caf::actor_system system_;
};

TEST_F(ReplicaHostTest, SamplersRunTheirShareThenTheStopFloodEndsEveryActor) {
  ReplicaHost host(system_, config_, facts_);
  std::map<std::string, caf::actor> by_name;
  for (const char* name : {"sampler-0", "sampler-1", "replay"}) {
    by_name[name] = host.spawn(name).handle;
  }
  EXPECT_EQ(host.find("sampler-1")->config.step_limit, 40);
  const cluster::LinkPlan links = cluster::plan_links(config_);
  for (const WiringStep& step : plan_wiring(config_, links)) {
    if (host.find(step.initiator) != nullptr && by_name.count(step.peer) != 0) {
      host.wire(step, by_name.at(step.peer));
    }
  }
  WaitOptions wait;
  wait.seconds = 60;
  (void)host.wait(wait);
  system_.await_all_actors_done();
  EXPECT_EQ(host.stop_reason(), "env_steps");
  const std::vector<ReplicaResult> results = host.results(links);
  ASSERT_EQ(results.size(), 3U);
  // The first sampler to finish its share stops the run for both (actor mode: no logical time,
  // so the other one stops wherever the flood finds it).
  EXPECT_GE(std::max(results[0].count, results[1].count), 40);
  EXPECT_EQ(results[0].unit, "env_steps");
  EXPECT_EQ(results[2].unit, "inserts");
  EXPECT_GT(results[2].count, 0);
  ASSERT_EQ(results[2].channels.size(), 1U);  // replay.batches, no hash in actor mode
  EXPECT_EQ(results[2].channels[0].port, "batches");
}

TEST_F(ReplicaHostTest, ALearnerNeedsTheTorchSpawnerAndStrangersAreRefused) {
  ReplicaHost host(system_, config_, facts_);
  try {
    (void)host.spawn("learner");
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("LibTorch"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)host.spawn("replay-3"), std::invalid_argument);
  EXPECT_TRUE(host.replicas().empty());
}

TEST_F(ReplicaHostTest, AJoiningSamplerIsSpawnedAsReplicaKOfItsGroup) {
  ReplicaHost host(system_, config_, facts_);
  const HostedReplica& joined = host.spawn("sampler-4");
  EXPECT_EQ(joined.config.index, 4);
  EXPECT_EQ(joined.config.seed, replica_seed(config_, *joined.config.group, 4));
  host.request_stop();
  WaitOptions wait;
  wait.seconds = 30;
  (void)host.wait(wait);
  system_.await_all_actors_done();
}

}  // namespace
}  // namespace tagflow::hosts
