#include "rl/envs/pendulum.hpp"

#include <algorithm>
#include <cmath>

#include "rl/envs/random.hpp"

namespace tagflow::envs {
namespace {

constexpr double kPi = 3.14159265358979323846;

EnvSpec pendulum_spec() {
  EnvSpec spec;
  spec.id = "Pendulum-v1";
  spec.observation_space = Space::box({3}, {-1.0F, -1.0F, -8.0F}, {1.0F, 1.0F, 8.0F});
  spec.action_space = Space::box({1}, -2.0F, 2.0F);
  spec.max_episode_steps = Pendulum::kMaxEpisodeSteps;
  return spec;
}

}  // namespace

const EnvSpec& Pendulum::spec() const noexcept {
  static const EnvSpec spec = pendulum_spec();
  return spec;
}

std::vector<double> Pendulum::state() const { return {state_.begin(), state_.end()}; }

double Pendulum::angle_normalize(double x) noexcept {
  // Python's float %: the remainder takes the divisor's sign.
  double r = std::fmod(x + kPi, 2 * kPi);
  if (r < 0) r += 2 * kPi;
  return r - kPi;
}

void Pendulum::reset_impl(void* observation) {
  const double theta = uniform(rng(), -kPi, kPi);
  const double theta_dot = uniform(rng(), -1.0, 1.0);
  state_ = {theta, theta_dot};
  observe_impl(observation);
}

StepResult Pendulum::step_impl(const Action& action, void* observation) {
  const double theta = state_[0];
  const double theta_dot = state_[1];
  const double u = std::clamp(static_cast<double>(action.values[0]), -kMaxTorque, kMaxTorque);
  const double norm = angle_normalize(theta);
  const double cost = norm * norm + 0.1 * (theta_dot * theta_dot) + 0.001 * (u * u);
  double new_theta_dot = theta_dot + (3 * kGravity / (2 * kLength) * std::sin(theta) +
                                      3.0 / (kMass * kLength * kLength) * u) *
                                         kDt;
  new_theta_dot = std::clamp(new_theta_dot, -kMaxSpeed, kMaxSpeed);
  state_ = {theta + new_theta_dot * kDt, new_theta_dot};
  observe_impl(observation);
  StepResult result;
  result.reward = static_cast<float>(-cost);
  return result;
}

void Pendulum::set_state_impl(const std::vector<double>& state) { state_ = {state[0], state[1]}; }

void Pendulum::observe_impl(void* observation) const {
  auto* out = static_cast<float*>(observation);
  out[0] = static_cast<float>(std::cos(state_[0]));
  out[1] = static_cast<float>(std::sin(state_[0]));
  out[2] = static_cast<float>(state_[1]);
}

}  // namespace tagflow::envs
