#include "rl/learning/n_step.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace tagflow::learning {
namespace {

std::vector<float> obs(float v) { return {v, -v}; }

TEST(NStepAccumulator, OneStepPassesTransitionsThroughWithGamma) {
  NStepAccumulator acc(1, 0.9);
  std::vector<NStepTransition> out;
  acc.push(obs(0), 1, 2.0F, obs(1), false, false, &out);
  ASSERT_EQ(out.size(), 1U);
  EXPECT_EQ(out[0].observation, obs(0));
  EXPECT_EQ(out[0].action, 1);
  EXPECT_FLOAT_EQ(out[0].reward, 2.0F);
  EXPECT_FLOAT_EQ(out[0].discount, 0.9F);
  EXPECT_EQ(out[0].next_observation, obs(1));
}

TEST(NStepAccumulator, SumsDiscountedRewardsOverNSteps) {
  NStepAccumulator acc(3, 0.5);
  std::vector<NStepTransition> out;
  acc.push(obs(0), 0, 1.0F, obs(1), false, false, &out);
  acc.push(obs(1), 1, 2.0F, obs(2), false, false, &out);
  EXPECT_TRUE(out.empty());
  acc.push(obs(2), 0, 4.0F, obs(3), false, false, &out);
  ASSERT_EQ(out.size(), 1U);
  EXPECT_FLOAT_EQ(out[0].reward, 1.0F + 0.5F * 2.0F + 0.25F * 4.0F);
  EXPECT_FLOAT_EQ(out[0].discount, 0.125F);
  EXPECT_EQ(out[0].observation, obs(0));
  EXPECT_EQ(out[0].next_observation, obs(3));
  EXPECT_EQ(acc.pending(), 2U);
}

TEST(NStepAccumulator, FlushesShorterReturnsWithZeroDiscountWhenTerminated) {
  NStepAccumulator acc(3, 0.5);
  std::vector<NStepTransition> out;
  acc.push(obs(0), 0, 1.0F, obs(1), false, false, &out);
  acc.push(obs(1), 1, 2.0F, obs(2), true, false, &out);
  ASSERT_EQ(out.size(), 2U);
  EXPECT_FLOAT_EQ(out[0].reward, 2.0F);
  EXPECT_FLOAT_EQ(out[0].discount, 0.0F);
  EXPECT_FLOAT_EQ(out[1].reward, 2.0F);
  EXPECT_FLOAT_EQ(out[1].discount, 0.0F);
  EXPECT_EQ(out[1].next_observation, obs(2));
  EXPECT_EQ(acc.pending(), 0U);
}

TEST(NStepAccumulator, BootstrapsTruncatedEpisodesWithTheShorterHorizon) {
  NStepAccumulator acc(3, 0.5);
  std::vector<NStepTransition> out;
  acc.push(obs(0), 0, 1.0F, obs(1), false, false, &out);
  acc.push(obs(1), 1, 1.0F, obs(2), false, true, &out);
  ASSERT_EQ(out.size(), 2U);
  EXPECT_FLOAT_EQ(out[0].discount, 0.25F);
  EXPECT_FLOAT_EQ(out[1].discount, 0.5F);
}

TEST(NStepAccumulator, RejectsBadParameters) {
  EXPECT_THROW(NStepAccumulator(0, 0.9), std::invalid_argument);
  EXPECT_THROW(NStepAccumulator(1, 1.5), std::invalid_argument);
}

}  // namespace
}  // namespace tagflow::learning
