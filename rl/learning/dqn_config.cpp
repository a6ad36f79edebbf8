#include "rl/learning/dqn_config.hpp"

#include <stdexcept>
#include <string>

namespace tagflow::learning {

void DqnConfig::validate() const {
  network.validate();
  auto require = [](bool ok, const char* field) {
    if (!ok) throw std::invalid_argument(std::string("DqnConfig.") + field + " is out of range");
  };
  require(learning_rate > 0.0, "learning_rate");
  require(adam_beta1 >= 0.0 && adam_beta1 < 1.0, "adam_beta1");
  require(adam_beta2 >= 0.0 && adam_beta2 < 1.0, "adam_beta2");
  require(adam_epsilon > 0.0, "adam_epsilon");
  require(huber_delta > 0.0, "huber_delta");
  require(negative_td_weight > 0.0 && negative_td_weight <= 1.0, "negative_td_weight");
  require(target_tau >= 0.0 && target_tau <= 1.0, "target_tau");
  require(target_tau > 0.0 || target_update > 0, "target_update");
  require(joint_agents >= 0, "joint_agents");
  // A joint action is one integer: agent j's action times num_actions^j, summed.
  double codes = 1.0;
  for (int j = 0; j < joint_agents; ++j) codes *= network.output_size;
  require(codes < 9.0e18, "joint_agents");
}

}  // namespace tagflow::learning
