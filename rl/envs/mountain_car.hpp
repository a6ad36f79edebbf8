// MountainCar-v0, identical to Gymnasium's classic_control/mountain_car.py.
#pragma once

#include <array>

#include "rl/envs/env.hpp"

namespace tagflow::envs {

/// An under-powered car in a valley; actions 0 (push left), 1 (none), 2 (push right).
///
/// velocity += (a - 1) * 0.001 - cos(3 * position) * 0.0025, clipped to ±0.07; position +=
/// velocity, clipped to [-1.2, 0.6]; at the left wall a negative velocity becomes 0. Terminated
/// when position >= 0.5 and velocity >= 0; reward -1 per step; truncated after 200 steps. State
/// float64 [position, velocity]; reset position ~ U(-0.6, -0.4), velocity 0. See Env for errors
/// and threads.
class MountainCar final : public Env {
 public:
  static constexpr double kMinPosition = -1.2;
  static constexpr double kMaxPosition = 0.6;
  static constexpr double kMaxSpeed = 0.07;
  static constexpr double kGoalPosition = 0.5;
  static constexpr double kGoalVelocity = 0.0;
  static constexpr double kForce = 0.001;
  static constexpr double kGravity = 0.0025;
  static constexpr int kMaxEpisodeSteps = 200;

  [[nodiscard]] const EnvSpec& spec() const noexcept override;
  [[nodiscard]] std::vector<double> state() const override;

  // Implementation hooks, public for non-virtual batch stepping (env_batch.hpp).
  void reset_impl(void* observation) override;
  StepResult step_impl(const Action& action, void* observation) override;
  void set_state_impl(const std::vector<double>& state) override;
  void observe_impl(void* observation) const override;

 private:
  std::array<double, 2> state_{};
};

}  // namespace tagflow::envs
