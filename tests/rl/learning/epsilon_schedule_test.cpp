#include "rl/learning/epsilon_schedule.hpp"

#include <gtest/gtest.h>

namespace tagflow::learning {
namespace {

TEST(EpsilonSchedule, DecaysLinearlyThenStaysAtTheEnd) {
  const EpsilonSchedule schedule{1.0, 0.1, 100};
  EXPECT_DOUBLE_EQ(schedule.at(0), 1.0);
  EXPECT_NEAR(schedule.at(50), 0.55, 1e-12);
  EXPECT_DOUBLE_EQ(schedule.at(100), 0.1);
  EXPECT_DOUBLE_EQ(schedule.at(1000000), 0.1);
  EXPECT_DOUBLE_EQ(schedule.at(-5), 1.0);
}

TEST(EpsilonSchedule, ZeroDecayStepsMeansConstantEnd) {
  EXPECT_DOUBLE_EQ((EpsilonSchedule{1.0, 0.2, 0}).at(0), 0.2);
}

}  // namespace
}  // namespace tagflow::learning
