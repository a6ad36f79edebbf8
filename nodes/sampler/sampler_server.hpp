// SamplerServer: the sampler node's logic — a vector env acting ε-greedily, either with a local
// policy copy (MlpForward over the learner's latest weights) or with greedy actions an inference
// server chose for the observations it was sent. No threads, no sockets: a binding calls it.
//
// One round: observations() → (inference or local) greedy actions → step(greedy) draws the
// ε-greedy actions from the sampler's own seeded generator, steps every env (autoreset in the
// same step, so every row is a real transition) and returns the transitions. Everything depends
// only on the seed and the sequence of calls, never on time.
//
// Supported envs: discrete actions with float32 observations (CartPole, Acrobot, MountainCar...)
// or uint8 pixel observations (PixelPong-v0), which the messages carry as bytes; the local
// policy copy scales them to [0, 1] floats for its forward pass (network_input.hpp).
// Errors: ParamError for a bad param (naming it), std::invalid_argument for an unsupported env
// or actions/weights of the wrong size. Not thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "common/state_stream.hpp"
#include "nodes/messages.hpp"
#include "nodes/node_params.hpp"
#include "nodes/sampler/mlp_forward.hpp"
#include "rl/envs/vector_env.hpp"

namespace tagflow::nodes {

/// The most envs one sampler steps (param `num_envs`).
inline constexpr std::size_t kMaxNumEnvs = 65536;

struct SamplerConfig {
  std::string env = "CartPole-v1";
  std::size_t num_envs = 8;
  bool local_policy = false;        // params policy: local | inference
  std::vector<int> hidden{64, 64};  // the learner's hidden sizes (local policy)
  double epsilon_start = 1.0;
  double epsilon_end = 0.05;
  std::int64_t epsilon_decay_steps = 10000;  // counted in this sampler's env steps
  std::uint64_t seed = 0;
  std::uint32_t index = 0;  // replica index: tags its observation batches
  // A perturbation on purpose (params reseed_at_step, reseed): from the step that reaches this
  // many env steps of this sampler, its exploration is drawn from `reseed` instead; 0: never.
  // Two runs that differ only here part at that step's tag (`tagflow diff`, tracing/README.md).
  std::int64_t reseed_at_step = 0;
  std::uint64_t reseed = 0;

  /// Reads params env, num_envs, policy, hidden, epsilon_start, epsilon_end, epsilon_decay_steps,
  /// reseed_at_step, reseed. `default_policy` is the policy when the params give none (the
  /// cluster file's default depends on its connections: nodes/sampler/sampler_kind.cpp).
  static SamplerConfig from_params(const NodeParams& params, std::uint64_t seed,
                                   std::uint32_t index,
                                   const std::string& default_policy = "inference");
};

class SamplerServer {
 public:
  explicit SamplerServer(const SamplerConfig& config);

  /// The current observation of every env, tagged with this sampler's index.
  [[nodiscard]] ObservationBatchMessage observations() const;
  /// ε-greedy over `greedy` (one action per env), one step of every env, the transitions;
  /// `acting_version` is the weights version that chose `greedy` (carried to the learner, which
  /// reports its policy lag).
  [[nodiscard]] TransitionsMessage step(const std::vector<std::int64_t>& greedy,
                                        std::uint64_t acting_version = 0);
  /// Greedy actions from the local policy copy, then step().
  [[nodiscard]] TransitionsMessage step_local();
  /// Loads weights into the local copy; older versions are ignored, except just after
  /// on_new_weights_source().
  void on_weights(const WeightsMessage& weights);
  /// A learner linked (again): its next weights load whatever their version (a learner restarted
  /// in actor mode counts from its checkpoint's version, or from 1 without one).
  void on_new_weights_source() { any_version_next_ = true; }

  [[nodiscard]] const SamplerConfig& config() const { return config_; }
  [[nodiscard]] std::size_t observation_size() const { return observation_size_; }
  [[nodiscard]] ObservationType observation_type() const { return observation_type_; }
  [[nodiscard]] std::int64_t num_actions() const { return num_actions_; }
  [[nodiscard]] std::int64_t env_steps() const { return env_steps_; }
  [[nodiscard]] std::int64_t episodes() const { return episodes_; }
  [[nodiscard]] std::uint64_t weights_version() const { return weights_version_; }
  [[nodiscard]] double epsilon() const;
  /// Returns of finished episodes since the last call, in completion order.
  [[nodiscard]] std::vector<double> take_finished_returns();

  /// Checkpoints: envs and their generators, the ε generator and schedule position (env steps),
  /// the local policy copy, episode returns in progress. load() expects a server built from the
  /// same config; StateError when the bytes do not fit, std::logic_error from save() for an env
  /// that cannot be checkpointed.
  void save(StateWriter& out) const;
  void load(StateReader& in);

 private:
  SamplerConfig config_;
  std::unique_ptr<envs::VectorEnv> env_;
  std::size_t observation_size_ = 0;
  ObservationType observation_type_ = ObservationType::kFloat32;
  std::int64_t num_actions_ = 0;
  std::vector<float> policy_input_;  // pixel observations as floats for the local policy
  std::unique_ptr<MlpForward> policy_;
  std::uint64_t weights_version_ = 0;
  bool any_version_next_ = false;  // on_new_weights_source() until the next load
  std::mt19937_64 rng_;
  std::vector<std::int64_t> actions_;
  std::vector<double> episode_returns_;
  std::vector<double> finished_;
  std::int64_t env_steps_ = 0;
  std::int64_t episodes_ = 0;
};

}  // namespace tagflow::nodes
