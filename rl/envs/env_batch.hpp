// The engine behind VectorEnv: a contiguous batch of envs stepped over an index range.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "rl/envs/env.hpp"

namespace tagflow::envs {

/// Where a batch writes: arrays of num_envs rows owned by the VectorEnv.
struct BatchBuffers {
  std::uint8_t* observations = nullptr;        ///< num_envs * observation bytes
  std::uint8_t* final_observations = nullptr;  ///< same size; null unless same-step autoreset
  float* rewards = nullptr;
  std::uint8_t* terminated = nullptr;
  std::uint8_t* truncated = nullptr;
  std::int32_t* episode_steps = nullptr;
  std::uint8_t* needs_reset = nullptr;  ///< next-step autoreset: env i resets on its next step
};

/// One request to a batch. Actions have been validated by the caller.
struct BatchRequest {
  BatchBuffers out;
  const std::int64_t* discrete_actions = nullptr;  ///< Discrete action spaces
  const float* box_actions = nullptr;              ///< Box: action_dims floats per env
  std::size_t action_dims = 0;
  std::optional<std::uint64_t> base_seed;  ///< reset: env i gets base_seed + i; none = continue
};

/// A batch of envs. step_range/reset_range on disjoint ranges may run on different threads at
/// the same time (each env is touched by one range only); anything else is single-threaded.
class EnvBatch {
 public:
  virtual ~EnvBatch() = default;
  [[nodiscard]] virtual const EnvSpec& spec() const noexcept = 0;
  [[nodiscard]] virtual std::size_t size() const noexcept = 0;
  virtual void reset_range(const BatchRequest& request, std::size_t begin, std::size_t end) = 0;
  virtual void step_range(const BatchRequest& request, std::size_t begin, std::size_t end) = 0;
  /// Env i (checkpoints save and load it through the Env interface).
  [[nodiscard]] virtual Env& env(std::size_t i) = 0;
};

/// The per-env logic shared by every batch: autoreset and time limit around env.step_impl.
/// `Step` steps one env (calling its step_impl), `Reset` resets it without reseeding.
template <typename E, typename StepFn, typename ResetFn>
inline void step_one(const EnvSpec& spec, const BatchRequest& r, std::size_t i,
                     std::size_t obs_bytes, E& env, StepFn&& step, ResetFn&& reset) {
  const BatchBuffers& out = r.out;
  std::uint8_t* obs = out.observations + i * obs_bytes;
  if (out.needs_reset[i] != 0) {
    reset(env, obs);
    out.rewards[i] = 0.0F;
    out.terminated[i] = 0;
    out.truncated[i] = 0;
    out.episode_steps[i] = 0;
    out.needs_reset[i] = 0;
    return;
  }
  Action action;
  if (r.discrete_actions != nullptr) {
    action.index = r.discrete_actions[i];
  } else {
    action.values = Span<const float>(r.box_actions + i * r.action_dims, r.action_dims);
  }
  StepResult result = step(env, action, obs);
  const std::int32_t steps = ++out.episode_steps[i];
  if (spec.max_episode_steps > 0 && steps >= spec.max_episode_steps) result.truncated = true;
  out.rewards[i] = result.reward;
  out.terminated[i] = result.terminated ? 1 : 0;
  out.truncated[i] = result.truncated ? 1 : 0;
  if (!result.terminated && !result.truncated) return;
  if (out.final_observations == nullptr) {
    out.needs_reset[i] = 1;
    return;
  }
  std::memcpy(out.final_observations + i * obs_bytes, obs, obs_bytes);
  reset(env, obs);
  out.episode_steps[i] = 0;
}

/// Seeds and resets one env through the public interface.
void reset_env_seeded(Env& env, std::optional<std::uint64_t> seed, std::uint8_t* observation);

/// A contiguous std::vector of one concrete env type E (a `final` Env with public reset_impl and
/// step_impl): each step is a direct, non-virtual call.
template <typename E>
class EnvBatchOf final : public EnvBatch {
 public:
  explicit EnvBatchOf(std::size_t n) : envs_(n) {}
  template <typename Make>
  EnvBatchOf(std::size_t n, Make make) {
    envs_.reserve(n);
    for (std::size_t i = 0; i < n; ++i) envs_.push_back(make());
  }

  const EnvSpec& spec() const noexcept override { return envs_.front().spec(); }
  std::size_t size() const noexcept override { return envs_.size(); }
  Env& env(std::size_t i) override { return envs_[i]; }

  void reset_range(const BatchRequest& r, std::size_t begin, std::size_t end) override {
    const std::size_t obs_bytes = spec().observation_space.bytes();
    for (std::size_t i = begin; i < end; ++i) {
      std::optional<std::uint64_t> seed;
      if (r.base_seed) seed = *r.base_seed + i;
      reset_env_seeded(envs_[i], seed, r.out.observations + i * obs_bytes);
      r.out.episode_steps[i] = 0;
      r.out.needs_reset[i] = 0;
    }
  }

  void step_range(const BatchRequest& r, std::size_t begin, std::size_t end) override {
    const EnvSpec& env_spec = spec();
    const std::size_t obs_bytes = env_spec.observation_space.bytes();
    auto step = [](E& env, const Action& action, std::uint8_t* obs) {
      return env.E::step_impl(action, obs);
    };
    auto reset = [](E& env, std::uint8_t* obs) { env.E::reset_impl(obs); };
    for (std::size_t i = begin; i < end; ++i) {
      step_one(env_spec, r, i, obs_bytes, envs_[i], step, reset);
    }
  }

 private:
  std::vector<E> envs_;
};

/// Envs of any type behind the Env interface (one virtual call per env step).
std::unique_ptr<EnvBatch> make_generic_batch(const std::function<std::unique_ptr<Env>()>& factory,
                                             std::size_t n);

}  // namespace tagflow::envs
