#include <gtest/gtest.h>

#include <filesystem>

#include "nodes/replay/replay_server.hpp"

namespace tagflow::nodes {
namespace {

constexpr std::uint32_t kWidth = 1000;  // bytes per pixel observation

// `rows` pixel transitions; every byte of row i's observation is (first + i) mod 256.
TransitionsMessage pixel_rows(int first, int rows) {
  TransitionsMessage t;
  t.observation_size = kWidth;
  t.observation_type = ObservationType::kUInt8;
  for (int i = first; i < first + rows; ++i) {
    t.observations_u8.insert(t.observations_u8.end(), kWidth, static_cast<std::uint8_t>(i));
    t.next_observations_u8.insert(t.next_observations_u8.end(), kWidth,
                                  static_cast<std::uint8_t>(i + 1));
    t.actions.push_back(i % 3);
    t.rewards.push_back(static_cast<float>(i));
    t.terminated.push_back(0);
  }
  return t;
}

ReplayConfig pixel_config() {
  ReplayConfig c;
  c.capacity = 100;
  c.min_size = 8;
  c.batch_size = 4;
  c.samples_per_insert = 1.0;
  c.max_batches_per_call = 10;
  return c;
}

TEST(ReplayServerPixels, StoresPixelsAsBytesNotFloats) {
  ReplayServer r(pixel_config());
  r.insert(pixel_rows(0, 50));
  EXPECT_EQ(r.observation_type(), ObservationType::kUInt8);
  ASSERT_EQ(r.size(), 50U);
  // Two frames per item (observation and next observation) plus small per-item fields:
  // as float32 the same items would take more than four times the frame bytes.
  EXPECT_GE(r.stored_bytes(), 50U * 2 * kWidth);
  EXPECT_LT(r.stored_bytes(), 50U * 2 * kWidth + 50U * 64);
}

TEST(ReplayServerPixels, BatchesHoldTheInsertedBytes) {
  ReplayServer r(pixel_config());
  r.insert(pixel_rows(0, 20));
  const std::vector<SampleBatchMessage> batches = r.due_batches();
  ASSERT_FALSE(batches.empty());
  for (const SampleBatchMessage& b : batches) {
    EXPECT_EQ(b.observation_type, ObservationType::kUInt8);
    EXPECT_TRUE(b.observations.empty());
    ASSERT_EQ(b.observations_u8.size(), b.rows() * kWidth);
    for (std::size_t row = 0; row < b.rows(); ++row) {
      const auto index = static_cast<std::uint8_t>(b.rewards[row]);  // reward i: row i
      EXPECT_EQ(b.observations_u8[row * kWidth], index);
      EXPECT_EQ(b.observations_u8[row * kWidth + kWidth - 1], index);
      EXPECT_EQ(b.next_observations_u8[row * kWidth], static_cast<std::uint8_t>(index + 1));
    }
    (void)encode(b);  // consistent
  }
}

TEST(ReplayServerPixels, ObservationsOfAnotherTypeAreRefused) {
  ReplayServer r(pixel_config());
  r.insert(pixel_rows(0, 2));
  TransitionsMessage floats;
  floats.observation_size = kWidth;
  floats.observations.assign(kWidth, 0.0F);
  floats.next_observations.assign(kWidth, 0.0F);
  floats.actions = {0};
  floats.rewards = {0.0F};
  floats.terminated = {0};
  EXPECT_THROW(r.insert(floats), std::invalid_argument);
}

TEST(ReplayServerPixels, APixelCheckpointRestoresPixels) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / "tagflow_replay_pixels_ckpt";
  std::filesystem::remove_all(dir);
  ReplayConfig c = pixel_config();
  c.checkpoint_dir = dir.string();
  ReplayServer a(c);
  a.insert(pixel_rows(0, 30));
  ASSERT_TRUE(a.checkpoint().has_value());
  c.restore = true;
  ReplayServer b(c);
  EXPECT_EQ(b.observation_type(), ObservationType::kUInt8);
  EXPECT_EQ(b.size(), 30U);
  const auto from_a = a.due_batches();
  const auto from_b = b.due_batches();
  ASSERT_EQ(from_a.size(), from_b.size());
  for (std::size_t i = 0; i < from_a.size(); ++i) {
    EXPECT_EQ(from_a[i].observations_u8, from_b[i].observations_u8);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tagflow::nodes
