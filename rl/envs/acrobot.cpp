#include "rl/envs/acrobot.hpp"

#include <algorithm>
#include <cmath>

#include "rl/envs/random.hpp"

namespace tagflow::envs {
namespace {

constexpr double kTorques[3] = {-1.0, 0.0, 1.0};

EnvSpec acrobot_spec() {
  const auto v1 = static_cast<float>(Acrobot::kMaxVel1);
  const auto v2 = static_cast<float>(Acrobot::kMaxVel2);
  EnvSpec spec;
  spec.id = "Acrobot-v1";
  spec.observation_space =
      Space::box({6}, {-1.0F, -1.0F, -1.0F, -1.0F, -v1, -v2}, {1.0F, 1.0F, 1.0F, 1.0F, v1, v2});
  spec.action_space = Space::discrete(3);
  spec.max_episode_steps = Acrobot::kMaxEpisodeSteps;
  spec.reward_threshold = -100.0;
  return spec;
}

/// Gymnasium's wrap(): shifts by the range width until x is within [low, high]. A value far
/// outside (only a state set from outside, `tagflow env step`, gets there: the dynamics keep the
/// angles within a few turns) takes one fmod first, where the loop would not end (x - diff == x
/// beyond 2^53 widths, and for an infinity); within 64 widths the loop's bits are Gymnasium's.
double wrap(double x, double low, double high) noexcept {
  const double diff = high - low;
  if (!std::isfinite(x)) return x;
  if (x > high + 64 * diff || x < low - 64 * diff) {
    x = low + std::fmod(x - low, diff);
    if (x < low) x += diff;
  }
  while (x > high) x -= diff;
  while (x < low) x += diff;
  return x;
}

}  // namespace

const EnvSpec& Acrobot::spec() const noexcept {
  static const EnvSpec spec = acrobot_spec();
  return spec;
}

std::vector<double> Acrobot::state() const { return {state_.begin(), state_.end()}; }

Acrobot::State5 Acrobot::derivatives(const State5& s) noexcept {
  constexpr double m1 = kLinkMass1, m2 = kLinkMass2, l1 = kLinkLength1;
  constexpr double lc1 = kLinkComPos1, lc2 = kLinkComPos2, i1 = kLinkMoi, i2 = kLinkMoi;
  constexpr double g = kGravity;
  const double theta1 = s[0], theta2 = s[1], dtheta1 = s[2], dtheta2 = s[3], a = s[4];
  const double d1 =
      m1 * (lc1 * lc1) + m2 * (l1 * l1 + lc2 * lc2 + 2 * l1 * lc2 * std::cos(theta2)) + i1 + i2;
  const double d2 = m2 * (lc2 * lc2 + l1 * lc2 * std::cos(theta2)) + i2;
  const double phi2 = m2 * lc2 * g * std::cos(theta1 + theta2 - kPi / 2.0);
  const double phi1 = -m2 * l1 * lc2 * (dtheta2 * dtheta2) * std::sin(theta2) -
                      2 * m2 * l1 * lc2 * dtheta2 * dtheta1 * std::sin(theta2) +
                      (m1 * lc1 + m2 * l1) * g * std::cos(theta1 - kPi / 2) + phi2;
  const double ddtheta2 =
      (a + d2 / d1 * phi1 - m2 * l1 * lc2 * (dtheta1 * dtheta1) * std::sin(theta2) - phi2) /
      (m2 * (lc2 * lc2) + i2 - (d2 * d2) / d1);
  const double ddtheta1 = -(d2 * ddtheta2 + phi1) / d1;
  return {dtheta1, dtheta2, ddtheta1, ddtheta2, 0.0};
}

void Acrobot::reset_impl(void* observation) {
  for (double& s : state_) s = static_cast<double>(static_cast<float>(uniform(rng(), -0.1, 0.1)));
  observe_impl(observation);
}

StepResult Acrobot::step_impl(const Action& action, void* observation) {
  const State5 y0 = {state_[0], state_[1], state_[2], state_[3], kTorques[action.index]};
  constexpr double dt = kDt;
  constexpr double dt2 = dt / 2.0;
  auto shifted = [](const State5& y, double h, const State5& k) {
    State5 out;
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = y[i] + h * k[i];
    return out;
  };
  const State5 k1 = derivatives(y0);
  const State5 k2 = derivatives(shifted(y0, dt2, k1));
  const State5 k3 = derivatives(shifted(y0, dt2, k2));
  const State5 k4 = derivatives(shifted(y0, dt, k3));
  std::array<double, 4> ns{};
  for (std::size_t i = 0; i < ns.size(); ++i) {
    ns[i] = y0[i] + dt / 6.0 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
  }
  ns[0] = wrap(ns[0], -kPi, kPi);
  ns[1] = wrap(ns[1], -kPi, kPi);
  ns[2] = std::min(std::max(ns[2], -kMaxVel1), kMaxVel1);
  ns[3] = std::min(std::max(ns[3], -kMaxVel2), kMaxVel2);
  state_ = ns;
  observe_impl(observation);
  StepResult result;
  result.terminated = -std::cos(state_[0]) - std::cos(state_[1] + state_[0]) > 1.0;
  result.reward = result.terminated ? 0.0F : -1.0F;
  return result;
}

void Acrobot::set_state_impl(const std::vector<double>& state) {
  for (std::size_t i = 0; i < state_.size(); ++i) state_[i] = state[i];
}

void Acrobot::observe_impl(void* observation) const {
  auto* out = static_cast<float*>(observation);
  out[0] = static_cast<float>(std::cos(state_[0]));
  out[1] = static_cast<float>(std::sin(state_[0]));
  out[2] = static_cast<float>(std::cos(state_[1]));
  out[3] = static_cast<float>(std::sin(state_[1]));
  out[4] = static_cast<float>(state_[2]);
  out[5] = static_cast<float>(state_[3]);
}

}  // namespace tagflow::envs
