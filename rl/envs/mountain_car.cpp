#include "rl/envs/mountain_car.hpp"

#include <algorithm>
#include <cmath>

#include "rl/envs/random.hpp"

namespace tagflow::envs {
namespace {

EnvSpec mountain_car_spec() {
  EnvSpec spec;
  spec.id = "MountainCar-v0";
  spec.observation_space = Space::box({2}, {static_cast<float>(MountainCar::kMinPosition), -0.07F},
                                      {static_cast<float>(MountainCar::kMaxPosition), 0.07F});
  spec.action_space = Space::discrete(3);
  spec.max_episode_steps = MountainCar::kMaxEpisodeSteps;
  spec.reward_threshold = -110.0;
  return spec;
}

}  // namespace

const EnvSpec& MountainCar::spec() const noexcept {
  static const EnvSpec spec = mountain_car_spec();
  return spec;
}

std::vector<double> MountainCar::state() const { return {state_.begin(), state_.end()}; }

void MountainCar::reset_impl(void* observation) {
  state_ = {uniform(rng(), -0.6, -0.4), 0.0};
  observe_impl(observation);
}

StepResult MountainCar::step_impl(const Action& action, void* observation) {
  double position = state_[0];
  double velocity = state_[1];
  velocity += static_cast<double>(action.index - 1) * kForce + std::cos(3 * position) * -kGravity;
  velocity = std::clamp(velocity, -kMaxSpeed, kMaxSpeed);
  position += velocity;
  position = std::clamp(position, kMinPosition, kMaxPosition);
  if (position == kMinPosition && velocity < 0) velocity = 0;
  state_ = {position, velocity};
  observe_impl(observation);
  StepResult result;
  result.reward = -1.0F;
  result.terminated = position >= kGoalPosition && velocity >= kGoalVelocity;
  return result;
}

void MountainCar::set_state_impl(const std::vector<double>& state) {
  state_ = {state[0], state[1]};
}

void MountainCar::observe_impl(void* observation) const {
  auto* out = static_cast<float*>(observation);
  out[0] = static_cast<float>(state_[0]);
  out[1] = static_cast<float>(state_[1]);
}

}  // namespace tagflow::envs
