// Expected transitions come from Gymnasium's CartPole formulas evaluated in float64 by hand
// (Python floats), independently of this implementation.
#include "rl/envs/cartpole.hpp"

#include <vector>

#include <gtest/gtest.h>

namespace tagflow::envs {
namespace {

void expect_state(const CartPole& env, const std::vector<double>& expected) {
  const std::vector<double> got = env.state();
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], 1e-12) << i;
}

TEST(CartPole, PushRightFromAFixedStateMatchesGymnasium) {
  CartPole env;
  env.set_state({0.01, -0.02, 0.03, 0.04});
  std::vector<float> obs(4);
  const StepResult r = env.step(Action::discrete(1), obs);
  expect_state(env, {0.0096, 0.17467919574755525, 0.0308, -0.24306871796000809});
  EXPECT_FLOAT_EQ(obs[1], 0.17467919574755525F);
  EXPECT_FLOAT_EQ(r.reward, 1.0F);
  EXPECT_FALSE(r.terminated);
  EXPECT_FALSE(r.truncated);
}

TEST(CartPole, PushLeftFromAFixedStateMatchesGymnasium) {
  CartPole env;
  env.set_state({0.01, -0.02, 0.03, 0.04});
  std::vector<float> obs(4);
  (void)env.step(Action::discrete(0), obs);
  expect_state(env, {0.0096, -0.21553901710278936, 0.0308, 0.34199522377603914});
}

TEST(CartPole, TiltedFastStateMatchesGymnasium) {
  CartPole env;
  env.set_state({-1.5, 0.8, -0.15, -1.2});
  std::vector<float> obs(4);
  const StepResult r = env.step(Action::discrete(1), obs);
  expect_state(env, {-1.484, 0.99670967529866472, -0.174, -1.5356860674755026});
  EXPECT_FALSE(r.terminated);
}

TEST(CartPole, CrossingTheTrackLimitTerminatesWithRewardOne) {
  CartPole env;
  env.set_state({2.39, 0.6, 0.0, 0.0});
  std::vector<float> obs(4);
  const StepResult r = env.step(Action::discrete(1), obs);
  expect_state(env, {2.402, 0.79512195121951224, 0.0, -0.29268292682926828});
  EXPECT_TRUE(r.terminated);
  EXPECT_FLOAT_EQ(r.reward, 1.0F);
  EXPECT_THROW((void)env.step(Action::discrete(1), obs), std::logic_error);
}

TEST(CartPole, ResetDrawsEachElementFromASmallUniform) {
  CartPole env;
  std::vector<float> obs(4);
  env.reset(7, obs);
  for (float v : obs) {
    EXPECT_GE(v, -0.05F);
    EXPECT_LT(v, 0.05F);
  }
  std::vector<float> again(4);
  env.reset(7, again);
  EXPECT_EQ(obs, again);
  env.reset(8, again);
  EXPECT_NE(obs, again);
}

TEST(CartPole, TruncatesAtFiveHundredSteps) {
  CartPole env;
  std::vector<float> obs(4);
  env.reset(1, obs);
  StepResult r;
  int steps = 0;
  // Alternate pushes against the pole's lean: a balancing controller keeps it up long enough.
  do {
    r = env.step(Action::discrete(obs[2] + 0.5F * obs[3] > 0.0F ? 1 : 0), obs);
    ++steps;
  } while (!r.terminated && !r.truncated);
  EXPECT_EQ(steps, 500);
  EXPECT_TRUE(r.truncated);
  EXPECT_FALSE(r.terminated);
}

TEST(CartPole, RejectsActionsOutsideDiscreteTwo) {
  CartPole env;
  std::vector<float> obs(4);
  env.reset(0, obs);
  EXPECT_THROW((void)env.step(Action::discrete(2), obs), std::invalid_argument);
  EXPECT_THROW((void)env.step(Action::discrete(-1), obs), std::invalid_argument);
}

TEST(CartPole, RejectsAnObservationBufferOfTheWrongSize) {
  CartPole env;
  std::vector<float> small(3);
  EXPECT_THROW(env.reset(0, small), std::invalid_argument);
  std::vector<std::uint8_t> bytes(4);
  EXPECT_THROW(env.reset(0, bytes), std::invalid_argument);
}

TEST(CartPole, SetStateRejectsTheWrongLength) {
  CartPole env;
  EXPECT_THROW(env.set_state({1.0, 2.0}), std::invalid_argument);
}

TEST(CartPole, StepBeforeResetIsAnError) {
  CartPole env;
  std::vector<float> obs(4);
  EXPECT_THROW((void)env.step(Action::discrete(0), obs), std::logic_error);
}

}  // namespace
}  // namespace tagflow::envs
