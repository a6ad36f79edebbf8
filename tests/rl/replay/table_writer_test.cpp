#include "rl/replay/table_writer.hpp"

#include <gtest/gtest.h>

#include "tests/rl/replay/table_fixtures.hpp"

namespace tagflow::replay {
namespace {

using testing::row_value;
using testing::ValueTransition;

constexpr std::size_t kWriterWords = 64;       // 256-byte "frames"
constexpr std::size_t kItemBytes = 8 + 4 + 1;  // action, reward, done
constexpr std::size_t kFrameBytes = kWriterWords * 4;

TableConfig chain_config(std::size_t max_items) {
  TableConfig config;
  config.spec = testing::spec_of(kWriterWords);
  config.max_items = max_items;
  config.selector = SelectorKind::kFifo;
  return config;
}

TEST(TableWriter, ConsecutiveTransitionsStoreEachObservationOnce) {
  Table table(chain_config(100));
  {
    TableWriter writer(table);
    for (std::uint32_t v = 0; v < 10; ++v) {
      ValueTransition t(v, kWriterWords);  // observation v == previous next_observation
      ASSERT_EQ(writer.insert(t.transition, 1.0), ReplayStatus::kOk);
    }
    const TableInfo info = table.info();
    EXPECT_EQ(info.frames, 11U);
    EXPECT_EQ(info.shared_frames, 9U);
    EXPECT_EQ(info.bytes, 10 * kItemBytes + 11 * kFrameBytes);
  }
  SampledBatch batch;
  ASSERT_EQ(table.sample({10, 0.0}, batch), ReplayStatus::kOk);
  for (std::size_t b = 0; b < 10; ++b)
    EXPECT_EQ(row_value(batch, b, kWriterWords), std::int64_t(b));
}

TEST(TableWriter, AStreamThatDoesNotContinueStoresANewFrame) {
  Table table(chain_config(100));
  TableWriter writer(table);
  ValueTransition first(10, kWriterWords);
  ValueTransition reset(20, kWriterWords);  // observation 20 != previous next_observation 11
  ASSERT_EQ(writer.insert(first.transition, 1.0), ReplayStatus::kOk);
  ASSERT_EQ(writer.insert(reset.transition, 1.0), ReplayStatus::kOk);
  EXPECT_EQ(table.info().shared_frames, 0U);
  EXPECT_EQ(table.info().frames, 4U);
}

TEST(TableWriter, EvictionKeepsSharedFramesAliveAndBytesExact) {
  Table table(chain_config(3));
  TableWriter writer(table);
  for (std::uint32_t v = 0; v < 10; ++v) {
    ValueTransition t(v, kWriterWords);
    ASSERT_EQ(writer.insert(t.transition, 1.0), ReplayStatus::kOk);
  }
  // Items 7, 8, 9 remain: frames 7, 8, 9, 10 (item 7's observation outlived item 6).
  const TableInfo info = table.info();
  EXPECT_EQ(info.size, 3U);
  EXPECT_EQ(info.frames, 4U);
  EXPECT_EQ(info.bytes, 3 * kItemBytes + 4 * kFrameBytes);
  SampledBatch batch;
  ASSERT_EQ(table.sample({3, 0.0}, batch), ReplayStatus::kOk);
  for (std::size_t b = 0; b < 3; ++b)
    EXPECT_EQ(row_value(batch, b, kWriterWords), std::int64_t(b + 7));
}

TEST(TableWriter, ByteLimitCountsSharedFramesOnce) {
  TableConfig config = chain_config(1000);
  config.max_bytes = 10 * (kItemBytes + kFrameBytes) + kFrameBytes + kItemBytes;
  Table table(config);
  TableWriter writer(table);
  for (std::uint32_t v = 0; v < 50; ++v) {
    ValueTransition t(v, kWriterWords);
    ASSERT_EQ(writer.insert(t.transition, 1.0), ReplayStatus::kOk);
  }
  // Shared frames roughly double capacity: about 10 items fit where 5 would without sharing.
  const TableInfo info = table.info();
  EXPECT_GE(info.size, 9U);
  EXPECT_LE(info.bytes, config.max_bytes);
}

}  // namespace
}  // namespace tagflow::replay
