#include "rl/envs/cartpole.hpp"

#include <cmath>
#include <limits>

#include "rl/envs/random.hpp"

namespace tagflow::envs {
namespace {

EnvSpec make_spec() {
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
  static const EnvSpec spec = make_spec();
  return spec;
}

std::vector<double> CartPole::state() const { return {state_.begin(), state_.end()}; }

void CartPole::reset_impl(void* observation) {
  for (double& s : state_) s = uniform(rng(), -0.05, 0.05);
  observe_impl(observation);
}

StepResult CartPole::step_impl(const Action& action, void* observation) {
  const double x = state_[0];
  const double x_dot = state_[1];
  const double theta = state_[2];
  const double theta_dot = state_[3];
  const double force = action.index == 1 ? kForceMag : -kForceMag;
  const double cos_theta = std::cos(theta);
  const double sin_theta = std::sin(theta);
  const double temp = (force + kPoleMassLength * (theta_dot * theta_dot) * sin_theta) / kTotalMass;
  const double theta_acc = (kGravity * sin_theta - cos_theta * temp) /
                           (kLength * (4.0 / 3.0 - kMassPole * cos_theta * cos_theta / kTotalMass));
  const double x_acc = temp - kPoleMassLength * theta_acc * cos_theta / kTotalMass;
  state_[0] = x + kTau * x_dot;
  state_[1] = x_dot + kTau * x_acc;
  state_[2] = theta + kTau * theta_dot;
  state_[3] = theta_dot + kTau * theta_acc;
  observe_impl(observation);
  StepResult result;
  result.reward = 1.0F;
  result.terminated = state_[0] < -kXThreshold || state_[0] > kXThreshold ||
                      state_[2] < -kThetaThreshold || state_[2] > kThetaThreshold;
  return result;
}

void CartPole::set_state_impl(const std::vector<double>& state) {
  for (std::size_t i = 0; i < state_.size(); ++i) state_[i] = state[i];
}

void CartPole::observe_impl(void* observation) const {
  auto* out = static_cast<float*>(observation);
  for (std::size_t i = 0; i < state_.size(); ++i) out[i] = static_cast<float>(state_[i]);
}

}  // namespace tagflow::envs
