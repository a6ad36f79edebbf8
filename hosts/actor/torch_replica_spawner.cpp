#include "hosts/actor/torch_replica_spawner.hpp"

#include <iostream>
#include <memory>

#include "hosts/torch_replica_config.hpp"
#include "nodes/inference/inference_actor.hpp"
#include "nodes/inference/policy_bank_actor.hpp"
#include "nodes/learner/learner_actor.hpp"

namespace tagflow::hosts {

TorchReplicaSpawner torch_replica_spawner() {
  return [](caf::actor_system& system, const ReplicaSpawnSetup& s) -> caf::actor {
    const ReplicaConfig& r = s.config;
    if (r.kind == cluster::NodeKind::learner) {
      nodes::LearnerActorOptions options{r.name,    r.evaluation ? r.target_return : std::nullopt,
                                         nullptr,   s.report,
                                         s.metrics, r.policy_file};
      if (options.target_return) {
        const EvaluationConfig& e = *r.evaluation;
        options.evaluator =
            std::make_shared<nodes::Evaluator>(e.env_id, e.hidden, e.episodes, e.seed, e.max_steps);
      }
      return caf::actor_cast<caf::actor>(
          nodes::spawn_learner_actor(system, learner_config(r), options));
    }
    if (!r.policies.empty()) {
      if (r.params.has("gateway_port")) {  // said, not silently ignored
        std::cerr << r.name << ": gateway_port is ignored in actor mode: the inference service "
                  << "runs in reactor mode only (nodes/gateway/PROTOCOL.md)\n";
      }
      // Each learner trains one policy: its weights load into that policy's slot.
      const nodes::PolicyBankActorOptions options{r.name, r.learner_policies, s.report, s.metrics};
      return caf::actor_cast<caf::actor>(
          nodes::spawn_policy_bank_actor(system, policy_bank_config(r), options));
    }
    return caf::actor_cast<caf::actor>(
        nodes::spawn_inference_actor(system, inference_config(r), {r.name, s.report, s.metrics}));
  };
}

}  // namespace tagflow::hosts
