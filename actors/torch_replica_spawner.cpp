#include "actors/torch_replica_spawner.hpp"

#include <memory>

#include "nodes/inference/inference_actor.hpp"
#include "nodes/learner/learner_actor.hpp"
#include "nodes/node_params.hpp"

namespace tagflow::actors {

std::uint64_t evaluation_seed(const cluster::ClusterConfig& config) {
  return config.seed + 424242ULL;
}

TorchReplicaSpawner torch_replica_spawner() {
  return [](caf::actor_system& system, const ReplicaSpawnSetup& s) -> caf::actor {
    nodes::NodeParams params(s.group->name, s.group->params, s.group->param_lines);
    if (s.group->kind == cluster::NodeKind::learner) {
      const auto config = nodes::LearnerConfig::from_params(
          params, s.config->seed, s.facts->observation_size, s.facts->num_actions);
      nodes::LearnerActorOptions options{s.name, s.config->stop.target_return, nullptr, s.report,
                                         s.metrics};
      if (s.config->stop.target_return) {
        options.evaluator =
            std::make_shared<nodes::Evaluator>(s.facts->env_id, config.dqn.network.hidden_sizes,
                                               config.eval_episodes, evaluation_seed(*s.config));
      }
      return caf::actor_cast<caf::actor>(nodes::spawn_learner_actor(system, config, options));
    }
    if (!params.has("hidden")) params.set("hidden", s.facts->hidden);
    const auto config = nodes::InferenceConfig::from_params(
        params, s.config->seed, s.facts->observation_size, s.facts->num_actions);
    return caf::actor_cast<caf::actor>(
        nodes::spawn_inference_actor(system, config, {s.name, s.report, s.metrics}));
  };
}

}  // namespace tagflow::actors
