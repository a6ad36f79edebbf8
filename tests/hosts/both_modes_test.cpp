// The same cluster file gives the same replicas in both modes: for every replica of the shipped
// files, the configuration actor mode spawned its actor from (hosts/actor/replica_host.hpp) equals
// the one reactor mode builds its reactor from (nodes/kind/replica_binding.hpp), field by
// field, including the LibTorch configurations of learners and inference servers. Both come from
// one function today (replica_config()), so the comparison guards against the two paths parting;
// each test also checks, in what both modes got, values written in its file (and the per-replica
// ones derived from them), so a configuration that lost the file's params fails too.
#include <map>
#include <sstream>
#include <string>
#include <vector>

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

/// Each replica's description (ReplicaConfig::describe() and describe_torch()), as both modes
/// have it once they agree.
using Descriptions = std::map<std::string, std::string>;

Descriptions expect_same_replicas_in_both_modes(const std::string& file) {
  const cluster::ClusterConfig config =
      cluster::load_cluster_config(std::string(TAGFLOW_SOURCE_DIR) + "/" + file);
  const ClusterFacts facts = ClusterFacts::of(config);
  const cluster::LinkPlan links = cluster::plan_links(config);

  auto system_config = actors::make_actor_system_config({false, 2});
  nodes::add_node_message_types(*system_config);
  caf::actor_system system(*system_config);
  ReplicaHost host(system, config, facts);
  Descriptions described;
  for (const cluster::NodeConfig& node : config.nodes) {
    for (int i = 0; i < node.replicas; ++i) {
      const std::string name = cluster::replica_name(node, i);
      const ReplicaConfig& actor = host.spawn(name).config;
      const ReplicaConfig reactor = replica_setup(config, links, facts, name).config;
      EXPECT_EQ(actor.describe(), reactor.describe()) << file << ": " << name;
      EXPECT_EQ(describe_torch(actor), describe_torch(reactor)) << file << ": " << name;
      described[name] = actor.describe() + describe_torch(actor);
    }
  }
  EXPECT_GE(described.size(), 5U) << file;
  for (const HostedReplica& r : host.replicas()) caf::anon_send(r.handle, actors::StopRun{""});
  system.await_all_actors_done();
  return described;
}

/// Expects `replica`'s description to hold every one of `lines` (whole lines of describe(), or
/// pieces of describe_torch()'s one line).
void expect_described(const Descriptions& described, const std::string& replica,
                      const std::vector<std::string>& lines) {
  const auto it = described.find(replica);
  ASSERT_NE(it, described.end()) << replica;
  for (const std::string& line : lines) {
    EXPECT_NE(it->second.find(line), std::string::npos)
        << replica << " lacks '" << line << "' in:\n"
        << it->second;
  }
}

/// The replicas' seeds ("seed=" lines), which differ from replica to replica.
std::string seed_of(const Descriptions& described, const std::string& replica) {
  const std::string& d = described.at(replica);
  const std::size_t at = d.find("\nseed=");
  return at == std::string::npos ? "" : d.substr(at, d.find('\n', at + 1) - at);
}

TEST(BothModes, TheLocalDemoFileGivesIdenticalReplicaConfigurations) {
  const Descriptions d = expect_same_replicas_in_both_modes("configs/local.yaml");
  expect_described(d, "sampler-1",
                   {"\nkind=sampler\n", "\nindex=1\n", "\nsampler.env=CartPole-v1\n",
                    "\nsampler.num_envs=8\n", "\nsampler.epsilon=1,0.04,4000\n"});
  expect_described(d, "replay",
                   {"\nreplay.capacity=50000\n", "\nreplay.min_size=1000\n",
                    "\nreplay.samples_per_insert=32\n", "\nreplay.batch_size=64\n"});
  expect_described(d, "learner", {"hidden=2 lr=0.001 gamma=0.99 target=128"});
  expect_described(d, "inference", {"max_batch=64 max_wait=1000000 seed="});
  EXPECT_NE(seed_of(d, "sampler-0"), "");
  EXPECT_NE(seed_of(d, "sampler-0"), seed_of(d, "sampler-1"));
}

TEST(BothModes, ThePixelFileGivesIdenticalReplicaConfigurations) {
  const Descriptions d = expect_same_replicas_in_both_modes("configs/atari.yaml");
  expect_described(d, "sampler-0", {"\nsampler.env=PixelPong-v0\n", "\nsampler.num_envs=4\n"});
  expect_described(d, "replay", {"\nreplay.capacity=2000\n", "\nreplay.batch_size=32\n"});
  expect_described(d, "learner", {"hidden=1 lr=0.0001 gamma=0.99 target=1000"});
  expect_described(d, "inference", {"max_batch=8 max_wait=1000000 seed="});
}

TEST(BothModes, TheTwoHostFileGivesIdenticalReplicaConfigurations) {
  const Descriptions d = expect_same_replicas_in_both_modes("configs/two-host.yaml");
  expect_described(d, "sampler-0", {"\nsampler.env=CartPole-v1\n", "\nsampler.num_envs=8\n"});
  expect_described(d, "learner", {"hidden=2 lr=0.001 gamma=0.99 target=128"});
  expect_described(d, "inference", {"max_batch=64 max_wait=1000000 seed="});
}

}  // namespace
}  // namespace tagflow::hosts
