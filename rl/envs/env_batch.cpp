#include "rl/envs/env_batch.hpp"

#include <stdexcept>

namespace tagflow::envs {

void reset_env_seeded(Env& env, std::optional<std::uint64_t> seed, std::uint8_t* observation) {
  const Space& space = env.spec().observation_space;
  if (space.dtype == DType::kUInt8) {
    env.reset(seed, Span<std::uint8_t>(observation, space.size()));
  } else {
    env.reset(seed, Span<float>(reinterpret_cast<float*>(observation), space.size()));
  }
}

namespace {

/// Steps or resets one env through the public interface, by observation dtype.
StepResult step_env(Env& env, const Action& action, std::uint8_t* observation) {
  const Space& space = env.spec().observation_space;
  if (space.dtype == DType::kUInt8) {
    return env.step(action, Span<std::uint8_t>(observation, space.size()));
  }
  return env.step(action, Span<float>(reinterpret_cast<float*>(observation), space.size()));
}

class GenericEnvBatch final : public EnvBatch {
 public:
  GenericEnvBatch(const std::function<std::unique_ptr<Env>()>& factory, std::size_t n) {
    envs_.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      envs_.push_back(factory());
      if (!envs_.back()) throw std::invalid_argument("env factory returned null");
      if (envs_.back()->spec().id != envs_.front()->spec().id) {
        throw std::invalid_argument("env factory returned envs of different kinds");
      }
    }
  }

  const EnvSpec& spec() const noexcept override { return envs_.front()->spec(); }
  std::size_t size() const noexcept override { return envs_.size(); }
  Env& env(std::size_t i) override { return *envs_[i]; }

  void reset_range(const BatchRequest& r, std::size_t begin, std::size_t end) override {
    const std::size_t obs_bytes = spec().observation_space.bytes();
    for (std::size_t i = begin; i < end; ++i) {
      std::optional<std::uint64_t> seed;
      if (r.base_seed) seed = *r.base_seed + i;
      reset_env_seeded(*envs_[i], seed, r.out.observations + i * obs_bytes);
      r.out.episode_steps[i] = 0;
      r.out.needs_reset[i] = 0;
    }
  }

  void step_range(const BatchRequest& r, std::size_t begin, std::size_t end) override {
    const EnvSpec& env_spec = spec();
    const std::size_t obs_bytes = env_spec.observation_space.bytes();
    auto reset = [](Env& env, std::uint8_t* obs) { reset_env_seeded(env, std::nullopt, obs); };
    for (std::size_t i = begin; i < end; ++i) {
      step_one(env_spec, r, i, obs_bytes, *envs_[i], step_env, reset);
    }
  }

 private:
  std::vector<std::unique_ptr<Env>> envs_;
};

}  // namespace

std::unique_ptr<EnvBatch> make_generic_batch(const std::function<std::unique_ptr<Env>()>& factory,
                                             std::size_t n) {
  return std::make_unique<GenericEnvBatch>(factory, n);
}

}  // namespace tagflow::envs
