#include "hosts/torch_replica_config.hpp"

namespace tagflow::hosts {

nodes::LearnerConfig learner_config(const ReplicaConfig& replica) {
  return nodes::LearnerConfig::from_params(replica.params, replica.network_seed,
                                           replica.observation_size, replica.num_actions);
}

nodes::InferenceConfig inference_config(const ReplicaConfig& replica) {
  return nodes::InferenceConfig::from_params(replica.params, replica.network_seed,
                                             replica.observation_size, replica.num_actions);
}

nodes::PolicyBankConfig policy_bank_config(const ReplicaConfig& replica) {
  replica.params.check_known({"max_batch", "max_wait"});
  (void)replica.params.get_int("max_batch", 64, 1);
  (void)replica.params.get_duration("max_wait", std::chrono::nanoseconds(0));
  nodes::PolicyBankConfig c;
  c.agents = replica.agents;
  c.hosted = replica.policies;
  c.seed = replica.network_seed;
  return c;
}

}  // namespace tagflow::hosts
