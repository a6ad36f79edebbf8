#include <gtest/gtest.h>

#include "nodes/inference/inference_server.hpp"
#include "nodes/network_input.hpp"
#include "rl/learning/mlp_spec.hpp"

namespace tagflow::nodes {
namespace {

constexpr std::uint32_t kWidth = 5;

InferenceConfig pixel_config(std::size_t max_batch) {
  const NodeParams p("inference", {{"max_batch", std::to_string(max_batch)}, {"hidden", "8"}});
  return InferenceConfig::from_params(p, 4, static_cast<int>(kWidth), 3);
}

ObservationBatchMessage pixel_request(std::uint32_t source, std::size_t rows) {
  ObservationBatchMessage m;
  m.source = source;
  m.observation_size = kWidth;
  m.observation_type = ObservationType::kUInt8;
  for (std::size_t i = 0; i < rows * kWidth; ++i) {
    m.observations_u8.push_back(static_cast<std::uint8_t>((97 * i + 13 * source) % 256));
  }
  return m;
}

ObservationBatchMessage as_floats(const ObservationBatchMessage& pixels) {
  ObservationBatchMessage m = pixels;
  m.observation_type = ObservationType::kFloat32;
  m.observations_u8.clear();
  for (const std::uint8_t x : pixels.observations_u8) {
    m.observations.push_back(static_cast<float>(x) * kPixelScale);
  }
  return m;
}

TEST(InferenceServerPixels, PixelRequestsGetTheActionsOfTheScaledFloats) {
  WeightsMessage w;
  w.version = 3;
  w.values = learning::init_mlp_parameters(learning::MlpSpec{kWidth, {8}, 3}, 17);
  InferenceServer pixels(pixel_config(4));
  InferenceServer floats(pixel_config(4));
  pixels.on_weights(w);
  floats.on_weights(w);
  const std::vector<ObservationBatchMessage> requests{pixel_request(0, 7), pixel_request(1, 3)};
  const auto from_pixels = pixels.serve(requests);
  const auto from_floats = floats.serve({as_floats(requests[0]), as_floats(requests[1])});
  ASSERT_EQ(from_pixels.size(), 2U);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(from_pixels[i].source, requests[i].source);
    EXPECT_EQ(from_pixels[i].actions.size(), requests[i].rows());
    EXPECT_EQ(from_pixels[i].actions, from_floats[i].actions);
    EXPECT_EQ(from_pixels[i].weights_version, 3U);
  }
}

TEST(InferenceServerPixels, PixelAndFloatRequestsMixInOneBatch) {
  InferenceServer mixed(pixel_config(64));
  InferenceServer floats(pixel_config(64));
  const ObservationBatchMessage a = pixel_request(0, 4);
  const ObservationBatchMessage b = as_floats(pixel_request(1, 4));
  const auto answers = mixed.serve({a, b});
  const auto expected = floats.serve({as_floats(a), b});
  EXPECT_EQ(answers[0].actions, expected[0].actions);
  EXPECT_EQ(answers[1].actions, expected[1].actions);
  EXPECT_EQ(mixed.forward_passes(), 1U);
}

}  // namespace
}  // namespace tagflow::nodes
