#include "rl/envs/space.hpp"

#include <limits>

#include <gtest/gtest.h>

namespace tagflow::envs {
namespace {

TEST(Space, DiscreteHasOneInt64Element) {
  const Space s = Space::discrete(3);
  EXPECT_EQ(s.size(), 1U);
  EXPECT_EQ(s.bytes(), 8U);
  EXPECT_EQ(s.to_string(), "Discrete(3)");
}

TEST(Space, BoxSizeIsTheProductOfItsShape) {
  const Space s = Space::box({4, 84, 84}, 0.0F, 255.0F, DType::kUInt8);
  EXPECT_EQ(s.size(), 4U * 84U * 84U);
  EXPECT_EQ(s.bytes(), 28224U);
  EXPECT_EQ(s.low.size(), s.size());
  EXPECT_EQ(s.to_string(), "Box(0, 255, (4, 84, 84), uint8)");
}

TEST(Space, BoxPrintsPerElementBoundsWhenTheyDiffer) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(Space::box({2}, {-1.0F, -inf}, {1.0F, inf}).to_string(),
            "Box([-1, -inf], [1, inf], (2,), float32)");
  EXPECT_EQ(Space::box({1}, -2.0F, 2.0F).to_string(), "Box(-2, 2, (1,), float32)");
}

TEST(Space, MultiDiscreteKeepsItsValueCounts) {
  const Space s = Space::multi_discrete({32, 11, 2});
  EXPECT_EQ(s.size(), 3U);
  EXPECT_EQ(s.bytes(), 12U);
  EXPECT_EQ(s.to_string(), "MultiDiscrete([32, 11, 2])");
}

}  // namespace
}  // namespace tagflow::envs
