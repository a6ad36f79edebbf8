// LearnerServer: the learner node's logic — one DQN update (rl/learning's DqnLearner) per
// minibatch from replay, new priorities back to replay, and the online weights for samplers and
// inference servers every publish_every updates. No threads, no sockets, no clock.
//
// Batch assembly: uint8 (pixel) batches become floats in [0, 1] here, just before the update
// (network_input.hpp); replay and the wire keep the bytes.
//
// Links LibTorch (through tagflow_learning); only learner and inference processes do.
// Errors: ParamError for a bad param (naming it); std::invalid_argument for a batch whose
// observation size does not match the network. Not thread-safe: one caller at a time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/state_stream.hpp"
#include "nodes/messages.hpp"
#include "nodes/node_params.hpp"
#include "rl/learning/dqn_learner.hpp"

namespace tagflow::nodes {

struct LearnerConfig {
  learning::DqnConfig dqn;
  double gamma = 0.99;
  std::int64_t publish_every = 1;  // updates between weight broadcasts
  std::int64_t eval_every = 1000;  // updates between evaluations (stop: target_return)
  int eval_episodes = 20;
  std::int64_t eval_max_steps = 0;  // steps per evaluation episode; 0: to the episode's end

  /// Reads algo (dqn or vdn), hidden, learning_rate, gamma, target_update, double_dqn,
  /// max_grad_norm, negative_td_weight, publish_every, eval_every, eval_episodes, eval_max_steps;
  /// the network's input/output sizes come from the env. `joint_agents`: the agents of the policy a
  /// vdn learner trains (its batches are joint transitions, rl/learning/dqn_learner.hpp); algo: vdn
  /// with fewer than two is a ParamError.
  static LearnerConfig from_params(const NodeParams& params, std::uint64_t seed,
                                   int observation_size, int num_actions, int joint_agents = 0);
};

struct LearnerOutput {
  PriorityUpdateMessage priorities;
  std::optional<WeightsMessage> weights;  // set every publish_every updates
  double loss = 0.0;
};

class LearnerServer {
 public:
  explicit LearnerServer(const LearnerConfig& config);

  [[nodiscard]] LearnerOutput on_batch(const SampleBatchMessage& batch);
  /// The current online weights (version = updates so far).
  [[nodiscard]] WeightsMessage weights() const;
  [[nodiscard]] std::int64_t updates() const { return learner_.updates(); }
  [[nodiscard]] const LearnerConfig& config() const { return config_; }
  /// Writes the online network as a TorchScript file at `path`
  /// (rl/learning/torchscript_policy.hpp), creating its directory: how a multi-agent file's
  /// learners export their policies.
  void export_torchscript(const std::string& path) const;
  /// Greedy action of the online network (evaluation episodes).
  [[nodiscard]] std::int64_t greedy_action(const float* observation) const {
    return learner_.greedy_action(observation);
  }

  /// Checkpoints: online and target weights, Adam's moments and step, the update count
  /// (learning::LearnerState). load() throws StateError or learning::LearnerStateError when the
  /// bytes do not fit this learner's network.
  void save(StateWriter& out) const;
  void load(StateReader& in);

 private:
  LearnerConfig config_;
  learning::DqnLearner learner_;
  learning::TransitionBatch batch_;
};

}  // namespace tagflow::nodes
