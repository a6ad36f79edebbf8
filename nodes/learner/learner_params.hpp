// LearnerParams: the learner's params as a cluster file gives them, read and range-checked
// without LibTorch, so that `tagflow up` refuses a bad learner param before any process starts
// (hosts/replica_params_check.hpp) and the learner process reads them the same way
// (LearnerConfig::from_params, learner_server.hpp, builds on this).
// Errors: ParamError naming the node, the param and its line. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "nodes/node_params.hpp"

namespace tagflow::nodes {

struct LearnerParams {
  std::vector<int> hidden{64, 64};   // hidden layer sizes, each in [1, 2^20]
  double learning_rate = 1e-3;       // (0, 1]
  double gamma = 0.99;               // [0, 1]
  std::int64_t target_update = 500;  // updates between target syncs, >= 1
  bool double_dqn = true;
  double max_grad_norm = 10.0;  // [0, 1e9]
  /// Hysteretic learning: the loss weight of negative TD errors (DqnConfig), in [1e-6, 1].
  double negative_td_weight = 1.0;
  std::int64_t publish_every = 1;   // >= 1
  std::int64_t eval_every = 1000;   // >= 1
  int eval_episodes = 20;           // >= 1
  std::int64_t eval_max_steps = 0;  // >= 0 (0: to the episode's end)
  /// algo: vdn — value decomposition over the agents of the learner's policy (multi-agent files
  /// only: the policy must serve several agents, checked with the file, policy_config.hpp).
  bool value_decomposition = false;

  /// Reads algo (dqn or vdn), hidden, learning_rate, gamma, target_update, double_dqn,
  /// max_grad_norm, negative_td_weight, publish_every, eval_every, eval_episodes, eval_max_steps;
  /// refuses others.
  static LearnerParams read(const NodeParams& params);
};

}  // namespace tagflow::nodes
