// Expected transitions: Gymnasium's MountainCar formulas evaluated by hand in float64.
#include "rl/envs/mountain_car.hpp"

#include <gtest/gtest.h>

#include "tests/rl/envs/transition_check.hpp"

namespace tagflow::envs {
namespace {

using testing::expect_transition;

TEST(MountainCar, PushRightFromRestMatchesGymnasium) {
  MountainCar env;
  expect_transition(env, {{-0.5, 0.0},
                          Action::discrete(2),
                          {-0.49917684300416926, 0.00082315699583074275},
                          -1.0,
                          false});
}

TEST(MountainCar, PushLeftWhileMovingMatchesGymnasium) {
  MountainCar env;
  expect_transition(env, {{-0.3, 0.01},
                          Action::discrete(0),
                          {-0.29255402492067667, 0.0074459750793233392},
                          -1.0,
                          false});
}

TEST(MountainCar, LeftWallStopsTheCar) {
  MountainCar env;
  expect_transition(env, {{-1.19, -0.02}, Action::discrete(0), {-1.2, 0.0}, -1.0, false});
}

TEST(MountainCar, ReachingTheFlagTerminates) {
  MountainCar env;
  expect_transition(
      env,
      {{0.49, 0.02}, Action::discrete(2), {0.51074843566653261, 0.020748435666532672}, -1.0, true});
}

TEST(MountainCar, VelocityIsClippedBeforeMoving) {
  MountainCar env;
  expect_transition(env, {{-0.1, 0.0695},
                          Action::discrete(2),
                          {-0.031888341222814018, 0.068111658777185988},
                          -1.0,
                          false});
  env.set_state({0.0, 0.0699});
  std::vector<float> obs(2);
  (void)env.step(Action::discrete(2), obs);
  EXPECT_LE(env.state()[1], MountainCar::kMaxSpeed);
}

TEST(MountainCar, ResetPlacesTheCarInTheValleyAtRest) {
  MountainCar env;
  std::vector<float> obs(2);
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    env.reset(seed, obs);
    EXPECT_GE(obs[0], -0.6F);
    EXPECT_LT(obs[0], -0.4F);
    EXPECT_EQ(obs[1], 0.0F);
  }
}

TEST(MountainCar, DoingNothingIsTruncatedAtTwoHundredSteps) {
  MountainCar env;
  std::vector<float> obs(2);
  env.reset(0, obs);
  int steps = 0;
  StepResult r;
  do {
    r = env.step(Action::discrete(1), obs);
    ++steps;
  } while (!r.terminated && !r.truncated);
  EXPECT_EQ(steps, 200);
  EXPECT_TRUE(r.truncated);
}

}  // namespace
}  // namespace tagflow::envs
