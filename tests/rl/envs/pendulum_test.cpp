// Expected transitions: Gymnasium's Pendulum formulas evaluated by hand in float64.
#include "rl/envs/pendulum.hpp"

#include <cmath>

#include <gtest/gtest.h>

#include "tests/rl/envs/transition_check.hpp"

namespace tagflow::envs {
namespace {

using testing::expect_transition;

struct Torque {
  std::vector<float> value;
  Action action() const { return Action::box(value); }
};

TEST(Pendulum, TorqueStepMatchesGymnasium) {
  Pendulum env;
  const Torque u{{1.5F}};
  expect_transition(
      env, {{1.0, 0.5}, u.action(), {1.0678051619302962, 1.3561032386059226}, -1.02725, false});
}

TEST(Pendulum, ClipsTheSpeedBeforeIntegratingTheAngle) {
  Pendulum env;
  const Torque u{{2.0F}};
  expect_transition(env, {{1.0, 7.9}, u.action(), {1.4, 8.0}, -7.245, false});
}

TEST(Pendulum, ClipsTheTorqueToTwo) {
  Pendulum env;
  const Torque u{{5.0F}};
  expect_transition(env, {{1.0, 7.9}, u.action(), {1.4, 8.0}, -7.245, false});
}

TEST(Pendulum, CostUsesTheNormalizedAngle) {
  Pendulum env;
  const Torque u{{-0.5F}};
  expect_transition(env, {{4.0, -2.0},
                          u.action(),
                          {3.8678699064259527, -2.6426018714809461},
                          -5.6131851469207419,
                          false});
  const Torque zero{{0.0F}};
  expect_transition(env, {{-7.0, 1.0},
                          zero.action(),
                          {-6.9746369974519542, 0.5072600509609082},
                          -0.61382330384322414,
                          false});
}

TEST(Pendulum, AngleNormalizeWrapsLikePythonModulo) {
  const double pi = 3.14159265358979323846;
  EXPECT_NEAR(Pendulum::angle_normalize(4.0), 4.0 - 2 * pi, 1e-15);
  EXPECT_NEAR(Pendulum::angle_normalize(-7.0), -7.0 + 2 * pi, 1e-15);
  EXPECT_NEAR(Pendulum::angle_normalize(pi), -pi, 1e-15);
  EXPECT_NEAR(Pendulum::angle_normalize(0.5), 0.5, 1e-15);
}

TEST(Pendulum, ObservationIsCosSinAndSpeed) {
  Pendulum env;
  env.set_state({0.3, -1.25});
  std::vector<float> obs(3);
  env.observe(obs);
  EXPECT_FLOAT_EQ(obs[0], static_cast<float>(std::cos(0.3)));
  EXPECT_FLOAT_EQ(obs[1], static_cast<float>(std::sin(0.3)));
  EXPECT_FLOAT_EQ(obs[2], -1.25F);
}

TEST(Pendulum, NeverTerminatesAndTruncatesAtTwoHundredSteps) {
  Pendulum env;
  std::vector<float> obs(3);
  env.reset(4, obs);
  const std::vector<float> u = {1.0F};
  int steps = 0;
  StepResult r;
  do {
    r = env.step(Action::box(u), obs);
    ++steps;
    EXPECT_FALSE(r.terminated);
  } while (!r.truncated);
  EXPECT_EQ(steps, 200);
}

TEST(Pendulum, RejectsAWrongNumberOfActionValues) {
  Pendulum env;
  std::vector<float> obs(3);
  env.reset(0, obs);
  const std::vector<float> two = {1.0F, 2.0F};
  EXPECT_THROW((void)env.step(Action::box(two), obs), std::invalid_argument);
  EXPECT_THROW((void)env.step(Action::discrete(0), obs), std::invalid_argument);
}

}  // namespace
}  // namespace tagflow::envs
