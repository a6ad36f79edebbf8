// CartPole-v1, identical to Gymnasium's classic_control/cartpole.py.
#pragma once

#include <array>
#include <cmath>

#include "rl/envs/env.hpp"

namespace tagflow::envs {

/// A pole on a cart; push left (action 0) or right (action 1) with 10 N.
///
/// Gymnasium constants: g 9.8, cart 1.0 kg, pole 0.1 kg, half-length 0.5, force 10, tau 0.02,
/// Euler integration (x, then x_dot, then theta, then theta_dot, each from the old values),
/// terminated on the new state when |x| > 2.4 or |theta| > 12 degrees, reward +1 on every step
/// including the terminating one, truncated after 500 steps. State float64 [x, x_dot, theta,
/// theta_dot], observation its float32 copy; reset draws each element from U(-0.05, 0.05).
/// Thread-safety and errors: see Env.
class CartPole final : public Env {
 public:
  static constexpr double kGravity = 9.8;
  static constexpr double kMassCart = 1.0;
  static constexpr double kMassPole = 0.1;
  static constexpr double kTotalMass = kMassCart + kMassPole;
  static constexpr double kLength = 0.5;  // half the pole's length
  static constexpr double kPoleMassLength = kMassPole * kLength;
  static constexpr double kForceMag = 10.0;
  static constexpr double kTau = 0.02;
  static constexpr double kThetaThreshold = 12.0 * 2.0 * 3.14159265358979323846 / 360.0;
  static constexpr double kXThreshold = 2.4;
  static constexpr int kMaxEpisodeSteps = 500;

  CartPole();

  [[nodiscard]] const EnvSpec& spec() const noexcept override;
  [[nodiscard]] std::vector<double> state() const override;

  // Implementation hooks, public so that a batch of CartPoles can call them without virtual
  // dispatch (see env_batch.hpp); use reset()/step() otherwise.
  void reset_impl(void* observation) override;
  StepResult step_impl(const Action& action, void* observation) override;
  void set_state_impl(const std::vector<double>& state) override;
  void observe_impl(void* observation) const override;

 private:
  std::array<double, 4> state_{};
};

// Defined here so that a batch of CartPoles (EnvBatchOf<CartPole>) inlines the step.
inline StepResult CartPole::step_impl(const Action& action, void* observation) {
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

inline void CartPole::observe_impl(void* observation) const {
  auto* out = static_cast<float*>(observation);
  for (std::size_t i = 0; i < state_.size(); ++i) out[i] = static_cast<float>(state_[i]);
}

}  // namespace tagflow::envs
