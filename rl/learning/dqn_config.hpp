// DqnConfig: every hyperparameter of the DQN update (DqnLearner). Plain values, no torch.
#pragma once

#include <cstdint>

#include "rl/learning/mlp_spec.hpp"

namespace tagflow::learning {

struct DqnConfig {
  /// The Q-network: observation size in, one Q-value per discrete action out.
  MlpSpec network{4, {64, 64}, 2};
  /// Adam (the torch.optim.Adam update, no weight decay, no amsgrad).
  double learning_rate = 1e-3;
  double adam_beta1 = 0.9;
  double adam_beta2 = 0.999;
  double adam_epsilon = 1e-8;
  /// Huber loss threshold on the TD error (smooth L1 when 1).
  double huber_delta = 1.0;
  /// Hysteretic Q-learning (Matignon et al. 2007, with DQN Omidshafiei et al. 2017): a sample
  /// whose TD error is negative (the outcome worse than the estimate) weighs this much in the
  /// loss, a positive one 1. Below 1, an independent learner discounts the bad outcomes that other
  /// agents' exploration causes it. In (0, 1]; 1 is plain DQN.
  double negative_td_weight = 1.0;
  /// Gradients are rescaled to this global L2 norm when above it; ≤ 0 disables clipping.
  double max_grad_norm = 10.0;
  /// Double DQN: the online network picks the next action, the target network values it.
  bool double_dqn = true;
  /// Hard target sync: copy online → target every this many updates (when target_tau == 0); the
  /// learner's `target_update` param (`tagflow train --target-sync`).
  std::int64_t target_update = 500;
  /// Soft (Polyak) target update after every update: target ← τ·online + (1−τ)·target.
  double target_tau = 0.0;
  /// Value decomposition (VDN, Sunehag et al. 2017) over this many agents that share the
  /// network; 0 trains plain DQN. With k > 0 every batch row is one joint transition of the k
  /// agents (row layout in DqnLearner) and the team's Q is the sum of the agents' Qs.
  int joint_agents = 0;
  /// Seeds the initial weights (init_mlp_parameters); the learner uses no other randomness.
  std::uint64_t seed = 0;

  /// Floats per batch row: the network's input, or with joint_agents = k the k agents' inputs
  /// followed by k alive flags.
  [[nodiscard]] int row_size() const {
    return joint_agents > 0 ? joint_agents * (network.input_size + 1) : network.input_size;
  }

  /// Throws std::invalid_argument naming the first bad field.
  void validate() const;
};

}  // namespace tagflow::learning
