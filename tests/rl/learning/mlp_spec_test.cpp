#include "rl/learning/mlp_spec.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

namespace tagflow::learning {
namespace {

TEST(MlpSpec, CountsWeightsAndBiasesOfEveryLayer) {
  const MlpSpec spec{4, {64, 64}, 2};
  EXPECT_EQ(spec.parameter_count(), 4 * 64 + 64 + 64 * 64 + 64 + 64 * 2 + 2);
  EXPECT_EQ(spec.to_string(), "4-64-64-2");
  const MlpSpec marl{1350, {64}, 2};
  EXPECT_EQ(marl.parameter_count(), 1350 * 64 + 64 + 64 * 2 + 2);
}

TEST(MlpSpec, LaysOutEachWeightBeforeItsBias) {
  const std::vector<LayerSlice> slices = layer_slices(MlpSpec{3, {5}, 2});
  ASSERT_EQ(slices.size(), 2U);
  EXPECT_EQ(slices[0].weight_offset, 0);
  EXPECT_EQ(slices[0].bias_offset, 15);
  EXPECT_EQ(slices[1].weight_offset, 20);
  EXPECT_EQ(slices[1].bias_offset, 30);
  EXPECT_EQ(slices[1].in, 5);
  EXPECT_EQ(slices[1].out, 2);
}

TEST(MlpSpec, RejectsNonPositiveSizes) {
  EXPECT_THROW((MlpSpec{0, {8}, 2}).validate(), std::invalid_argument);
  EXPECT_THROW((MlpSpec{4, {0}, 2}).validate(), std::invalid_argument);
  EXPECT_NO_THROW((MlpSpec{4, {}, 2}).validate());
}

TEST(MlpSpec, InitialParametersDependOnlyOnTheSeedAndStayWithinTheFanInBound) {
  const MlpSpec spec{16, {8}, 2};
  const std::vector<float> a = init_mlp_parameters(spec, 7);
  const std::vector<float> b = init_mlp_parameters(spec, 7);
  const std::vector<float> c = init_mlp_parameters(spec, 8);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  for (const LayerSlice& s : layer_slices(spec)) {
    const double bound = 1.0 / std::sqrt(static_cast<double>(s.in));
    for (std::int64_t i = s.weight_offset; i < s.bias_offset + s.out; ++i) {
      EXPECT_LE(std::abs(a[static_cast<std::size_t>(i)]), bound);
    }
  }
}

}  // namespace
}  // namespace tagflow::learning
