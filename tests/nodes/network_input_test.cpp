#include "nodes/network_input.hpp"

#include <gtest/gtest.h>

namespace tagflow::nodes {
namespace {

TEST(NetworkInput, PixelsAreScaledToTheUnitInterval) {
  const std::vector<std::uint8_t> pixels{0, 51, 255};
  std::vector<float> out(3, -1.0F);
  pixels_to_network_input(pixels.data(), pixels.size(), out.data());
  EXPECT_FLOAT_EQ(out[0], 0.0F);
  EXPECT_FLOAT_EQ(out[1], 0.2F);
  EXPECT_FLOAT_EQ(out[2], 1.0F);
}

TEST(NetworkInput, FloatObservationsPassThroughWithoutACopy) {
  const std::vector<float> floats{0.5F, -3.0F};
  std::vector<float> scratch;
  const float* input = network_input(ObservationType::kFloat32, floats, {}, 2, scratch);
  EXPECT_EQ(input, floats.data());
  EXPECT_TRUE(scratch.empty());
}

TEST(NetworkInput, PixelObservationsAreConvertedIntoTheScratchBuffer) {
  const std::vector<std::uint8_t> pixels{255, 0, 102};
  std::vector<float> scratch;
  const float* input = network_input(ObservationType::kUInt8, {}, pixels, 3, scratch);
  EXPECT_EQ(input, scratch.data());
  EXPECT_EQ(scratch, (std::vector<float>{1.0F, 0.0F, 102.0F * kPixelScale}));

  std::vector<float> kept;
  assign_network_input(ObservationType::kUInt8, {}, pixels, 3, kept);
  EXPECT_EQ(kept, scratch);
}

TEST(NetworkInput, ArraysOfTheWrongLengthAreRejected) {
  std::vector<float> scratch;
  EXPECT_THROW((void)network_input(ObservationType::kUInt8, {1.0F, 2.0F}, {}, 2, scratch),
               std::invalid_argument);
  EXPECT_THROW((void)network_input(ObservationType::kFloat32, {1.0F}, {}, 2, scratch),
               std::invalid_argument);
}

TEST(NetworkInput, EnvDtypesMapToMessageTypes) {
  EXPECT_EQ(observation_type_of(envs::DType::kFloat32), ObservationType::kFloat32);
  EXPECT_EQ(observation_type_of(envs::DType::kUInt8), ObservationType::kUInt8);
  EXPECT_THROW((void)observation_type_of(envs::DType::kInt64), std::invalid_argument);
}

}  // namespace
}  // namespace tagflow::nodes
