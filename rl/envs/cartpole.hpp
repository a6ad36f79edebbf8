// CartPole-v1, identical to Gymnasium's classic_control/cartpole.py.
#pragma once

#include <array>

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

}  // namespace tagflow::envs
