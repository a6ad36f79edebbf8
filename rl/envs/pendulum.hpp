// Pendulum-v1, identical to Gymnasium's classic_control/pendulum.py.
#pragma once

#include <array>

#include "rl/envs/env.hpp"

namespace tagflow::envs {

/// Swing a pendulum up and keep it upright with a torque in [-2, 2] (a Box(1) action).
///
/// u = clip(u, ±2); cost = norm(θ)² + 0.1 θ̇² + 0.001 u² with norm(x) = ((x + π) mod 2π) − π;
/// θ̇' = clip(θ̇ + (3g/(2l) sin θ + 3/(m l²) u) dt, ±8), then θ' = θ + θ̇' dt with the clipped θ̇'
/// (θ itself is never wrapped). Reward −cost; never terminates; truncated after 200 steps.
/// g 10, m 1, l 1, dt 0.05. State float64 [θ, θ̇]; observation float32 [cos θ, sin θ, θ̇]; reset
/// θ ~ U(−π, π), θ̇ ~ U(−1, 1). See Env for errors and threads.
class Pendulum final : public Env {
 public:
  static constexpr double kMaxSpeed = 8.0;
  static constexpr double kMaxTorque = 2.0;
  static constexpr double kDt = 0.05;
  static constexpr double kGravity = 10.0;
  static constexpr double kMass = 1.0;
  static constexpr double kLength = 1.0;
  static constexpr int kMaxEpisodeSteps = 200;

  [[nodiscard]] const EnvSpec& spec() const noexcept override;
  [[nodiscard]] std::vector<double> state() const override;

  /// Gymnasium's angle_normalize: x wrapped into [−π, π).
  static double angle_normalize(double x) noexcept;

  // Implementation hooks, public for non-virtual batch stepping (env_batch.hpp).
  void reset_impl(void* observation) override;
  StepResult step_impl(const Action& action, void* observation) override;
  void set_state_impl(const std::vector<double>& state) override;
  void observe_impl(void* observation) const override;

 private:
  std::array<double, 2> state_{};
};

}  // namespace tagflow::envs
