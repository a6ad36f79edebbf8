// Acrobot-v1, identical to Gymnasium's classic_control/acrobot.py ("book" dynamics).
#pragma once

#include <array>

#include "rl/envs/env.hpp"

namespace tagflow::envs {

/// Two links hanging from a pivot; torque −1, 0 or +1 (actions 0, 1, 2) on the middle joint.
///
/// One 4th-order Runge–Kutta step of dt 0.2 over the "book" equations (the torque held constant
/// as a fifth state), then θ1, θ2 wrapped into [−π, π] by repeated ±2π (so ±π stay as they are)
/// and θ̇1, θ̇2 clipped to ±4π and ±9π. Terminated when −cos θ1 − cos(θ1 + θ2) > 1; reward −1,
/// 0 on the terminating step; truncated after 500 steps. State float64 [θ1, θ2, θ̇1, θ̇2];
/// observation float32 [cos θ1, sin θ1, cos θ2, sin θ2, θ̇1, θ̇2]; reset draws U(−0.1, 0.1)⁴
/// rounded to float32, as Gymnasium does. See Env for errors and threads.
class Acrobot final : public Env {
 public:
  static constexpr double kDt = 0.2;
  static constexpr double kLinkLength1 = 1.0;
  static constexpr double kLinkMass1 = 1.0;
  static constexpr double kLinkMass2 = 1.0;
  static constexpr double kLinkComPos1 = 0.5;
  static constexpr double kLinkComPos2 = 0.5;
  static constexpr double kLinkMoi = 1.0;
  static constexpr double kGravity = 9.8;
  static constexpr double kPi = 3.14159265358979323846;
  static constexpr double kMaxVel1 = 4 * kPi;
  static constexpr double kMaxVel2 = 9 * kPi;
  static constexpr int kMaxEpisodeSteps = 500;

  [[nodiscard]] const EnvSpec& spec() const noexcept override;
  [[nodiscard]] std::vector<double> state() const override;

  // Implementation hooks, public for non-virtual batch stepping (env_batch.hpp).
  void reset_impl(void* observation) override;
  StepResult step_impl(const Action& action, void* observation) override;
  void set_state_impl(const std::vector<double>& state) override;
  void observe_impl(void* observation) const override;

 private:
  using State5 = std::array<double, 5>;  // θ1, θ2, θ̇1, θ̇2, torque
  static State5 derivatives(const State5& s) noexcept;

  std::array<double, 4> state_{};
};

}  // namespace tagflow::envs
