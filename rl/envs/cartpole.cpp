#include "rl/envs/cartpole.hpp"

#include <cmath>
#include <limits>

#include "rl/envs/random.hpp"

namespace tagflow::envs {
namespace {

EnvSpec cartpole_spec() {
  constexpr float kBig = std::numeric_limits<float>::max();
  const auto x2 = static_cast<float>(CartPole::kXThreshold * 2);
  const auto theta2 = static_cast<float>(CartPole::kThetaThreshold * 2);
  EnvSpec spec;
  spec.id = "CartPole-v1";
  spec.observation_space = Space::box({4}, {-x2, -kBig, -theta2, -kBig}, {x2, kBig, theta2, kBig});
  spec.action_space = Space::discrete(2);
  spec.max_episode_steps = CartPole::kMaxEpisodeSteps;
  spec.reward_threshold = 475.0;
  return spec;
}

}  // namespace

CartPole::CartPole() = default;

const EnvSpec& CartPole::spec() const noexcept {
  static const EnvSpec spec = cartpole_spec();
  return spec;
}

std::vector<double> CartPole::state() const { return {state_.begin(), state_.end()}; }

void CartPole::reset_impl(void* observation) {
  for (double& s : state_) s = uniform(rng(), -0.05, 0.05);
  observe_impl(observation);
}

void CartPole::set_state_impl(const std::vector<double>& state) {
  for (std::size_t i = 0; i < state_.size(); ++i) state_[i] = state[i];
}

}  // namespace tagflow::envs
