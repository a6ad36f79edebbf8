#include "nodes/sampler/mlp_forward.hpp"

#include <gtest/gtest.h>

namespace tagflow::nodes {
namespace {

TEST(MlpForward, ComputesLayersInMlpSpecLayoutWithReluBetween) {
  // 2 → 2 → 1: W1 = [[1, -1], [2, 0]], b1 = [0, -1]; W2 = [[1, 3]], b2 = [0.5].
  MlpForward mlp({2, 2, 1});
  ASSERT_EQ(mlp.parameter_count(), 4U + 2U + 2U + 1U);
  mlp.load({1, -1, 2, 0, 0, -1, 1, 3, 0.5F});
  const float input[] = {1.0F, 2.0F, 3.0F, 1.0F};
  float out[2] = {};
  mlp.forward(input, 2, out);
  // Row 0: h = relu([1-2, 2-1]) = [0, 1]; y = 0 + 3 + 0.5.
  EXPECT_FLOAT_EQ(out[0], 3.5F);
  // Row 1: h = relu([3-1, 6-1]) = [2, 5]; y = 2 + 15 + 0.5.
  EXPECT_FLOAT_EQ(out[1], 17.5F);
}

TEST(MlpForward, GreedyPicksTheLowestIndexOnTies) {
  MlpForward mlp({1, 3});
  mlp.load({0, 0, 0, 1, 1, 0});  // weights 0, biases [1, 1, 0]
  const float input[] = {5.0F};
  std::int64_t action = -1;
  mlp.greedy(input, 1, &action);
  EXPECT_EQ(action, 0);
}

TEST(MlpForward, RejectsWeightsOfTheWrongLength) {
  MlpForward mlp({4, 8, 2});
  EXPECT_THROW(mlp.load(std::vector<float>(5)), std::invalid_argument);
  EXPECT_THROW(MlpForward({4}), std::invalid_argument);
  EXPECT_THROW(MlpForward({4, 0, 2}), std::invalid_argument);
}

}  // namespace
}  // namespace tagflow::nodes
