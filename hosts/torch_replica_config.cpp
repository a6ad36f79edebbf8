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

}  // namespace tagflow::hosts
