// Expected transitions: Gymnasium's Acrobot formulas (book dynamics, one RK4 step, wrap, bound)
// evaluated by hand in float64.
#include "rl/envs/acrobot.hpp"

#include <cmath>

#include <vector>

#include <gtest/gtest.h>

#include "tests/rl/envs/transition_check.hpp"

namespace tagflow::envs {
namespace {

using testing::expect_transition;

TEST(Acrobot, PositiveTorqueStepMatchesGymnasium) {
  Acrobot env;
  expect_transition(
      env, {{0.05, -0.03, 0.02, -0.01},
            Action::discrete(2),
            {0.033939211630615466, 0.0101677904243258, -0.17583183080297707, 0.40177497965573855},
            -1.0,
            false});
}

TEST(Acrobot, NegativeTorqueStepMatchesGymnasium) {
  Acrobot env;
  expect_transition(env, {{0.05, -0.03, 0.02, -0.01},
                          Action::discrete(0),
                          {0.06046159233179129, -0.058398739260047711, 0.081476077390336799,
                           -0.26719409203149896},
                          -1.0,
                          false});
}

TEST(Acrobot, AnglesWrapAroundPi) {
  Acrobot env;
  expect_transition(
      env, {{3.1, 0.2, 3.0, -1.0},
            Action::discrete(1),
            {-2.5612509638856884, -0.018053975252357246, 3.3364647796221729, -1.2672834883966764},
            0.0,
            true});
}

// An angle set far outside the range (only a state set from outside gets there) is wrapped in
// one step: the loop alone never ended, since 1e30 - 2 pi == 1e30.
TEST(Acrobot, AnAngleFarOutsideTheRangeIsWrappedInOneStep) {
  Acrobot env;
  env.set_state({1e30, -1e30, 0.0, 0.0});
  std::vector<float> observation(env.spec().observation_space.size());
  (void)env.step(Action::discrete(1), observation);
  const std::vector<double> state = env.state();
  for (int i = 0; i < 2; ++i) {
    EXPECT_GE(state[static_cast<std::size_t>(i)], -M_PI) << i;
    EXPECT_LE(state[static_cast<std::size_t>(i)], M_PI) << i;
  }
}

TEST(Acrobot, VelocitiesAreClipped) {
  Acrobot env;
  const double pi = Acrobot::kPi;
  expect_transition(env, {{0.0, 2.0, 12.0, 28.0},
                          Action::discrete(2),
                          {-1.8387366649369312, 2.762103247149728, -4 * pi, 9 * pi},
                          -1.0,
                          false});
  expect_transition(env, {{-1.0, 2.5, -12.4, -28.0},
                          Action::discrete(0),
                          {2.3693511294471721, -1.4451952974486297, -4 * pi, 3.1094867809347342},
                          -1.0,
                          false});
}

TEST(Acrobot, RaisedTipTerminatesWithRewardZero) {
  Acrobot env;
  expect_transition(
      env, {{Acrobot::kPi - 0.1, 0.0, 0.0, 0.0},
            Action::discrete(1),
            {3.0288981667163681, 0.0099080456476425757, -0.1298026367179235, 0.10270642028538184},
            0.0,
            true});
}

TEST(Acrobot, ResetStateIsSmallAndRoundedToFloat32) {
  Acrobot env;
  std::vector<float> obs(6);
  env.reset(9, obs);
  for (double s : env.state()) {
    EXPECT_LE(std::abs(s), 0.1);
    EXPECT_EQ(s, static_cast<double>(static_cast<float>(s)));
  }
  EXPECT_FLOAT_EQ(obs[0], static_cast<float>(std::cos(env.state()[0])));
  EXPECT_FLOAT_EQ(obs[5], static_cast<float>(env.state()[3]));
}

TEST(Acrobot, RejectsActionThree) {
  Acrobot env;
  std::vector<float> obs(6);
  env.reset(0, obs);
  EXPECT_THROW((void)env.step(Action::discrete(3), obs), std::invalid_argument);
}

}  // namespace
}  // namespace tagflow::envs
