#include "hosts/actor/replica_spawner.hpp"

#include <stdexcept>

#include "nodes/multi_agent/multi_agent_actor.hpp"
#include "nodes/replay/replay_actor.hpp"
#include "nodes/sampler/sampler_actor.hpp"

namespace tagflow::hosts {

caf::actor spawn_replica(caf::actor_system& system, const ReplicaSpawnSetup& s,
                         const TorchReplicaSpawner& torch) {
  const ReplicaConfig& r = s.config;
  switch (r.kind) {
    case cluster::NodeKind::sampler: {
      nodes::SamplerActorOptions options{r.name, r.step_limit, s.report, s.metrics, s.recovery};
      return caf::actor_cast<caf::actor>(nodes::spawn_sampler_actor(system, *r.sampler, options));
    }
    case cluster::NodeKind::replay: {
      nodes::ReplayActorOptions options{r.name, 0, s.report, s.metrics, s.recovery};
      return caf::actor_cast<caf::actor>(nodes::spawn_replay_actor(system, *r.replay, options));
    }
    case cluster::NodeKind::learner:
    case cluster::NodeKind::inference:
      if (!torch) {
        throw std::invalid_argument(std::string(cluster::to_string(r.kind)) + " replica " + r.name +
                                    " needs LibTorch (run it from tagflow-torch)");
      }
      return torch(system, s);
    case cluster::NodeKind::multi_agent:
      return caf::actor_cast<caf::actor>(nodes::spawn_multi_agent_actor(
          system, *r.multi_agent,
          {r.name, r.step_limit, r.transition_links, r.observation_links, r.replica_policies,
           s.report, s.metrics}));
  }
  throw std::invalid_argument("unknown node kind of " + r.name);
}

const char* count_unit(cluster::NodeKind kind) {
  switch (kind) {
    case cluster::NodeKind::sampler:
      return "env_steps";
    case cluster::NodeKind::replay:
      return "inserts";
    case cluster::NodeKind::learner:
      return "updates";
    case cluster::NodeKind::inference:
      return "rows";
    case cluster::NodeKind::multi_agent:
      return "joint_steps";
  }
  return "";
}

}  // namespace tagflow::hosts
