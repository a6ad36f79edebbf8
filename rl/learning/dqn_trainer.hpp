// DqnTrainer: single-process DQN training of one environment (no cluster, no threads): an env
// from the envs registry, a replay table, a DqnLearner and an ε-greedy actor in one loop.
//
// Loop, per environment step:
//   1. act ε-greedily (ε from TrainConfig::epsilon at the current step) and step the env;
//   2. turn the step into n-step transitions (NStepAccumulator) and insert them into the
//      replay table (uniform, or prioritized with new items at the largest priority seen);
//   3. once learning_starts steps ran, every train_every steps do updates_per_round updates on
//      sampled minibatches (prioritized: with importance weights, then new priorities);
//   4. every eval_every steps (when > 0) evaluate the greedy policy on eval_interval_episodes
//      episodes and remember the best weights (keep_best). A policy whose mean reaches the
//      env's reward threshold is evaluated again on as many other episodes; it counts as solved
//      (and stop_at_threshold ends training) only if every one of those reaches the threshold.
// At the end the policy (the final weights, or the best evaluated ones with keep_best) is
// evaluated greedily on eval_episodes fresh episodes.
//
// Determinism: the env, the replay table, the ε draws and the weights are all seeded from
// TrainConfig::seed, and the loop is single-threaded; LibTorch must run one intra-op thread
// (the CLI sets it) for bit-identical weights, hence the same digest, across runs.
// Errors: std::invalid_argument for an unknown env, a non-discrete action space, a non-float32
// observation space or a bad config. Not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "rl/learning/dqn_config.hpp"
#include "rl/learning/epsilon_schedule.hpp"
#include "rl/learning/weights_buffer.hpp"

namespace tagflow::learning {

/// The learner settings `tagflow train` starts from: a 64-64 Q-network, Adam 2.3e-3, double
/// DQN, hard target sync every 128 updates (once per training round).
[[nodiscard]] inline DqnConfig default_dqn_config() {
  DqnConfig config;
  config.network.hidden_sizes = {64, 64};
  config.learning_rate = 2.3e-3;
  config.target_update = 128;
  return config;
}

/// Defaults: the CartPole-v1 settings of `tagflow train` (seeds 1, 2 and 7 all reach a 20-episode
/// greedy mean ≥ 475 within 36k env steps).
struct TrainConfig {
  std::string env_id = "CartPole-v1";
  std::uint64_t seed = 0;
  std::int64_t total_env_steps = 50000;
  std::int64_t learning_starts = 1000;
  std::int64_t train_every = 256;
  int updates_per_round = 128;
  std::size_t batch_size = 64;
  std::size_t replay_capacity = 100000;
  bool prioritized = false;
  /// Prioritized replay over the textbook binary sum tree (the K-ary tree's baseline).
  bool binary_sum_tree = false;
  double priority_exponent = 0.6;
  double importance_beta_start = 0.4;  // annealed linearly to 1 over the run
  int n_step = 1;
  double gamma = 0.99;
  EpsilonSchedule epsilon{1.0, 0.04, 8000};
  /// The learner; network.input_size/output_size are overwritten from the env's spaces.
  DqnConfig dqn = default_dqn_config();
  /// Learning rate decays linearly from dqn.learning_rate to this fraction of it at the end.
  double final_learning_rate_fraction = 0.2;
  int eval_episodes = 20;
  std::int64_t eval_every = 2560;
  int eval_interval_episodes = 20;
  bool keep_best = true;
  /// Stop early once a policy is solved (see step 4 above; the threshold is 475 for
  /// CartPole-v1). The final evaluation still runs.
  bool stop_at_threshold = true;
  /// Seconds between progress callbacks.
  double progress_interval_seconds = 2.0;
};

struct TrainProgress {
  std::int64_t env_steps = 0;
  std::int64_t updates = 0;
  std::int64_t episodes = 0;
  double steps_per_second = 0.0;
  double updates_per_second = 0.0;
  double recent_return = 0.0;  // mean return of the last (up to) 20 training episodes
  double epsilon = 0.0;
  double loss = 0.0;               // mean loss since the previous progress report
  double last_eval_return = -1.0;  // < 0 until the first interval evaluation
};

struct TrainSummary {
  std::string env_id;
  std::uint64_t seed = 0;
  double mean_return = 0.0;  // over eval_episodes greedy evaluation episodes
  double min_return = 0.0;
  double max_return = 0.0;
  std::vector<double> eval_returns;
  std::int64_t env_steps = 0;
  std::int64_t updates = 0;
  std::int64_t episodes = 0;
  double seconds = 0.0;   // wall time of the training loop and the final evaluation
  std::string digest;     // of the returned policy's weights
  std::string policy;     // "final" or "best@<env step>"
  MlpSpec network;        // the Q-network, sized for the env
  WeightsBuffer weights;  // the returned policy
};

using ProgressCallback = std::function<void(const TrainProgress&)>;

/// Runs the whole loop described above. `progress` may be empty.
[[nodiscard]] TrainSummary train_dqn(TrainConfig config, const ProgressCallback& progress = {});

/// Mean greedy return of `weights` (the MLP `network`) over `episodes` episodes of `env_id`,
/// episode i reset with seed `seed + i`; writes each return to `returns` when non-null.
[[nodiscard]] double evaluate_greedy(const std::string& env_id, const MlpSpec& network,
                                     const WeightsBuffer& weights, int episodes, std::uint64_t seed,
                                     std::vector<double>* returns = nullptr);

}  // namespace tagflow::learning
