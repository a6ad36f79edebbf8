#include "hosts/actor/torch_replica_spawner.hpp"

#include <memory>

#include "hosts/torch_replica_config.hpp"
#include "nodes/inference/inference_actor.hpp"
#include "nodes/learner/learner_actor.hpp"

namespace tagflow::hosts {

TorchReplicaSpawner torch_replica_spawner() {
  return [](caf::actor_system& system, const ReplicaSpawnSetup& s) -> caf::actor {
    const ReplicaConfig& r = s.config;
    if (r.kind == cluster::NodeKind::learner) {
      nodes::LearnerActorOptions options{r.name, r.target_return, nullptr, s.report, s.metrics};
      if (r.target_return) {
        const EvaluationConfig& e = *r.evaluation;
        options.evaluator =
            std::make_shared<nodes::Evaluator>(e.env_id, e.hidden, e.episodes, e.seed, e.max_steps);
      }
      return caf::actor_cast<caf::actor>(
          nodes::spawn_learner_actor(system, learner_config(r), options));
    }
    return caf::actor_cast<caf::actor>(
        nodes::spawn_inference_actor(system, inference_config(r), {r.name, s.report, s.metrics}));
  };
}

}  // namespace tagflow::hosts
