#include "rl/envs/multi_agent_env.hpp"

#include <stdexcept>

namespace tagflow::envs {

void MultiAgentEnv::check_observations(std::size_t size) const {
  const std::size_t expected =
      static_cast<std::size_t>(spec().num_agents) * spec().observation_space.size();
  if (size != expected) {
    throw std::invalid_argument(spec().id + ": observations need " + std::to_string(expected) +
                                " floats, got " + std::to_string(size));
  }
}

void MultiAgentEnv::reset(std::optional<std::uint64_t> seed, Span<float> observations) {
  check_observations(observations.size());
  if (seed) rng_.seed(*seed);
  reset_impl(observations.data());
  needs_reset_ = false;
}

MultiAgentStepInfo MultiAgentEnv::step(Span<const std::int64_t> actions, Span<float> observations,
                                       Span<float> rewards, Span<std::uint8_t> dones) {
  const auto n = static_cast<std::size_t>(spec().num_agents);
  check_observations(observations.size());
  if (actions.size() != n || rewards.size() != n || dones.size() != n) {
    throw std::invalid_argument(spec().id + ": actions, rewards and dones need " +
                                std::to_string(n) + " entries each");
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (actions[i] < 0 || actions[i] >= spec().action_space.n) {
      throw std::invalid_argument(spec().id + ": action " + std::to_string(actions[i]) +
                                  " of agent " + std::to_string(i) + " is outside " +
                                  spec().action_space.to_string());
    }
  }
  if (needs_reset_) {
    throw std::logic_error(spec().id + ": step called before reset or after the episode ended");
  }
  const MultiAgentStepInfo info =
      step_impl(actions.data(), observations.data(), rewards.data(), dones.data());
  if (info.episode_done) needs_reset_ = true;
  return info;
}

}  // namespace tagflow::envs
