// The multi-agent environment interface: every agent acts at every step (ma-gym's API).
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>

#include "rl/envs/space.hpp"
#include "rl/envs/span.hpp"

namespace tagflow::envs {

/// Static facts about a multi-agent env; every agent has the same spaces.
struct MultiAgentSpec {
  std::string id;
  int num_agents = 0;
  Space observation_space;  ///< per agent (float32)
  Space action_space;       ///< per agent (Discrete)
  int max_episode_steps = 0;
};

/// What a joint step reports besides the per-agent arrays.
struct MultiAgentStepInfo {
  int collisions = 0;         ///< env-specific event count (TrafficJunction: collisions this step)
  bool episode_done = false;  ///< every agent is done
};

/// A multi-agent env with joint steps:
///  - reset(seed, observations) starts an episode (reseeding first when given a seed; a fresh
///    env is seeded with 0) and writes num_agents × observation_space.size() floats, agent-major;
///  - step(actions, observations, rewards, dones) takes one Discrete action per agent and writes
///    per-agent observations, rewards and done flags (1 = done). Agents that are done keep being
///    passed actions, which are ignored.
/// Errors: std::invalid_argument for buffers of the wrong size or actions out of range;
/// std::logic_error for a step before reset or after every agent is done. Not thread-safe.
class MultiAgentEnv {
 public:
  virtual ~MultiAgentEnv() = default;
  MultiAgentEnv(const MultiAgentEnv&) = delete;
  MultiAgentEnv& operator=(const MultiAgentEnv&) = delete;

  [[nodiscard]] virtual const MultiAgentSpec& spec() const noexcept = 0;

  void reset(std::optional<std::uint64_t> seed, Span<float> observations);
  MultiAgentStepInfo step(Span<const std::int64_t> actions, Span<float> observations,
                          Span<float> rewards, Span<std::uint8_t> dones);

 protected:
  MultiAgentEnv() = default;
  MultiAgentEnv(MultiAgentEnv&&) = default;
  MultiAgentEnv& operator=(MultiAgentEnv&&) = default;

  virtual void reset_impl(float* observations) = 0;
  virtual MultiAgentStepInfo step_impl(const std::int64_t* actions, float* observations,
                                       float* rewards, std::uint8_t* dones) = 0;
  std::mt19937_64& rng() noexcept { return rng_; }

 private:
  void check_observations(std::size_t size) const;

  std::mt19937_64 rng_{0};
  bool needs_reset_ = true;
};

}  // namespace tagflow::envs
