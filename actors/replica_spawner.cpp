#include "actors/replica_spawner.hpp"

#include <stdexcept>

#include "nodes/node_params.hpp"
#include "nodes/replay/replay_actor.hpp"
#include "nodes/sampler/sampler_actor.hpp"

namespace tagflow::actors {

caf::actor spawn_replica(caf::actor_system& system, const ReplicaSpawnSetup& s,
                         const TorchReplicaSpawner& torch) {
  nodes::NodeParams params(s.group->name, s.group->params, s.group->param_lines);
  const std::uint64_t seed = nodes::replica_seed(*s.config, *s.group, s.index);
  switch (s.group->kind) {
    case cluster::NodeKind::sampler: {
      if (!params.has("hidden")) params.set("hidden", s.facts->hidden);
      const auto config =
          nodes::SamplerConfig::from_params(params, seed, static_cast<std::uint32_t>(s.index));
      nodes::SamplerActorOptions options{s.name, -1, s.report, s.metrics};
      if (s.config->stop.env_steps) {
        const auto n = static_cast<std::int64_t>(std::max<std::size_t>(1, s.facts->sampler_count));
        options.step_limit = (*s.config->stop.env_steps + n - 1) / n;
      }
      return caf::actor_cast<caf::actor>(nodes::spawn_sampler_actor(system, config, options));
    }
    case cluster::NodeKind::replay:
      return caf::actor_cast<caf::actor>(
          nodes::spawn_replay_actor(system, nodes::ReplayConfig::from_params(params, seed),
                                    {s.name, 0, s.report, s.metrics}));
    case cluster::NodeKind::learner:
    case cluster::NodeKind::inference:
      if (!torch) {
        throw std::invalid_argument(std::string(cluster::to_string(s.group->kind)) + " replica " +
                                    s.name + " needs LibTorch (run it from tagflow-torch)");
      }
      return torch(system, s);
  }
  throw std::invalid_argument("unknown node kind of " + s.name);
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
  }
  return "";
}

}  // namespace tagflow::actors
