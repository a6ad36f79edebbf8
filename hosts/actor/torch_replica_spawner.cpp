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
      options.recovery = s.recovery;
      if (options.target_return) {
        const EvaluationConfig& e = *r.evaluation;
        options.evaluator =
            std::make_shared<nodes::Evaluator>(e.env_id, e.hidden, e.episodes, e.seed, e.max_steps);
      }
      return caf::actor_cast<caf::actor>(
          nodes::spawn_learner_actor(system, learner_config(r), options));
    }
    if (!r.policies.empty()) {
      // Each learner trains one policy: its weights load into that policy's slot.
      nodes::PolicyBankActorOptions options;
      options.name = r.name;
      options.weight_policies = r.learner_policies;
      options.report = s.report;
      options.metrics = s.metrics;
      options.peer_policies = r.replica_policies;
      const nodes::PolicyBankConfig bank = policy_bank_config(r);
      if (std::optional<gateway::GatewayConfig> config = gateway_config(r)) {
        if (r.experience_linked) {
          auto queue = std::make_shared<gateway::ExperienceQueue>(config->max_experience);
          config->experience = queue;
          options.experience_source = [queue] { return queue->take(); };
        }
        // The gateway lives as long as the actor: its weights listener holds it.
        std::shared_ptr<gateway::ServiceGateway> service = start_gateway(
            r, *config, bank, s.metrics != nullptr ? &s.metrics->process_metrics() : nullptr);
        if (service != nullptr) {
          options.weights_listener = [service](int policy, const nodes::WeightsMessage& weights) {
            service->offer_weights(policy, weights);
          };
        }
      }
      return caf::actor_cast<caf::actor>(nodes::spawn_policy_bank_actor(system, bank, options));
    }
    nodes::InferenceActorOptions options{r.name, s.report, s.metrics};
    options.recovery = s.recovery;
    return caf::actor_cast<caf::actor>(
        nodes::spawn_inference_actor(system, inference_config(r), options));
  };
}

}  // namespace tagflow::hosts
