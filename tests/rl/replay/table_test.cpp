#include "rl/replay/table.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <stdexcept>
#include <thread>

#include "tests/rl/replay/table_fixtures.hpp"

namespace tagflow::replay {
namespace {

using testing::row_value;
using testing::ValueTransition;

constexpr std::size_t kWords = 8;

TableConfig config_with(SelectorKind selector, std::size_t max_items) {
  TableConfig config;
  config.name = "test";
  config.spec = testing::spec_of(kWords);
  config.max_items = max_items;
  config.selector = selector;
  return config;
}

void insert_value(Table& table, std::uint32_t v, double priority = 1.0, ItemKey* key = nullptr) {
  ValueTransition t(v, kWords);
  ASSERT_EQ(table.insert(t.transition, priority, kWaitForever, key), ReplayStatus::kOk);
}

TEST(Table, InsertedTransitionsComeBackIntact) {
  Table table(config_with(SelectorKind::kFifo, 8));
  ItemKey key = 99;
  insert_value(table, 30, 2.5, &key);
  EXPECT_EQ(key, 0U);
  SampledBatch batch;
  ASSERT_EQ(table.sample({3, 0.4}, batch), ReplayStatus::kOk);
  ASSERT_EQ(batch.batch_size, 3U);
  for (std::size_t b = 0; b < 3; ++b) {
    EXPECT_EQ(row_value(batch, b, kWords), 30);
    EXPECT_EQ(batch.keys[b], 0U);
    EXPECT_EQ(batch.priorities[b], 2.5);
    EXPECT_EQ(batch.weights[b], 1.0F);
    EXPECT_EQ(batch.times_sampled[b], b + 1);
  }
  EXPECT_EQ(batch.dones[0], 1);
  EXPECT_EQ(batch.table_size, 1U);
}

TEST(Table, RejectsTransitionsThatDoNotMatchTheSpecAndInvalidPriorities) {
  Table table(config_with(SelectorKind::kUniform, 8));
  ValueTransition wrong(1, kWords + 1);
  EXPECT_THROW((void)table.insert(wrong.transition, 1.0), std::invalid_argument);
  ValueTransition right(1, kWords);
  EXPECT_THROW((void)table.insert(right.transition, -1.0), std::invalid_argument);
  EXPECT_THROW((void)table.insert(right.transition, std::nan("")), std::invalid_argument);
  EXPECT_EQ(table.size(), 0U);
  SampledBatch batch;
  EXPECT_THROW((void)table.try_sample({0, 0.0}, batch), std::invalid_argument);
}

TEST(Table, EvictsTheOldestItemsWhenFull) {
  Table table(config_with(SelectorKind::kFifo, 4));
  for (std::uint32_t v = 0; v < 6; ++v) insert_value(table, v);
  EXPECT_EQ(table.size(), 4U);
  EXPECT_LT(table.priority(0), 0.0);
  EXPECT_LT(table.priority(1), 0.0);
  EXPECT_EQ(table.priority(2), 1.0);
  SampledBatch batch;
  ASSERT_EQ(table.sample({4, 0.0}, batch), ReplayStatus::kOk);
  for (std::size_t b = 0; b < 4; ++b) {
    EXPECT_EQ(batch.keys[b], b + 2);
    EXPECT_EQ(row_value(batch, b, kWords), static_cast<std::int64_t>(b + 2));
  }
  EXPECT_EQ(table.info().evictions, 2U);
}

TEST(Table, EvictsTheOldestItemsWhenTheByteLimitIsReached) {
  TableConfig config = config_with(SelectorKind::kUniform, 100);
  const std::size_t item = 8 + 4 + 1 + 2 * kWords * 4;  // action, reward, done, two frames
  config.max_bytes = 3 * item + item / 2;
  Table table(config);
  for (std::uint32_t v = 0; v < 10; ++v) insert_value(table, v);
  const TableInfo info = table.info();
  EXPECT_EQ(info.size, 3U);
  EXPECT_EQ(info.bytes, 3 * item);
  EXPECT_LE(info.bytes, config.max_bytes);
  EXPECT_EQ(info.frames, 6U);
  EXPECT_GT(table.priority(9), 0.0);
  EXPECT_LT(table.priority(6), 0.0);
}

TEST(Table, PriorityUpdatesApplyToLiveKeysAndIgnoreEvictedOnes) {
  Table table(config_with(SelectorKind::kPrioritized, 3));
  for (std::uint32_t v = 0; v < 5; ++v) insert_value(table, v);  // keys 2, 3, 4 live
  const std::size_t applied = table.update_priorities({0, 3, 1, 4, 77}, {5.0, 6.0, 7.0, 8.0, 9.0});
  EXPECT_EQ(applied, 2U);
  EXPECT_EQ(table.priority(2), 1.0);
  EXPECT_EQ(table.priority(3), 6.0);
  EXPECT_EQ(table.priority(4), 8.0);
  EXPECT_THROW(table.update_priorities({3}, {1.0, 2.0}), std::invalid_argument);
  EXPECT_THROW(table.update_priorities({3}, {-2.0}), std::invalid_argument);
  EXPECT_EQ(table.priority(3), 6.0);
}

TEST(Table, ImportanceWeightsFollowProbabilitiesAndBeta) {
  TableConfig config = config_with(SelectorKind::kPrioritized, 4);
  config.priority_exponent = 1.0;
  Table table(config);
  insert_value(table, 1, 1.0);
  insert_value(table, 2, 3.0);
  SampledBatch batch;
  const double beta = 0.5;
  ASSERT_EQ(table.sample({400, beta}, batch), ReplayStatus::kOk);
  std::size_t low = 0;
  for (std::size_t b = 0; b < 400; ++b) {
    if (batch.keys[b] == 0) {
      ++low;
      EXPECT_DOUBLE_EQ(batch.probabilities[b], 0.25);
      EXPECT_FLOAT_EQ(batch.weights[b], 1.0F);  // the rarest item gets the largest weight
    } else {
      EXPECT_DOUBLE_EQ(batch.probabilities[b], 0.75);
      EXPECT_NEAR(batch.weights[b], std::pow(3.0, -beta), 1e-6);
    }
  }
  EXPECT_EQ(low, 100U);  // stratified: exactly a quarter of the strata fall on the first item
}

TEST(Table, ZeroPriorityItemsAreNeverSampled) {
  Table table(config_with(SelectorKind::kPrioritized, 16));
  for (std::uint32_t v = 0; v < 16; ++v) insert_value(table, v, v % 2 == 0 ? 0.0 : 1.0);
  SampledBatch batch;
  for (int round = 0; round < 50; ++round) {
    ASSERT_EQ(table.sample({64, 0.4}, batch), ReplayStatus::kOk);
    for (ItemKey key : batch.keys) ASSERT_EQ(key % 2, 1U);
  }
}

TEST(Table, SampleBlocksUntilMinSizeIsReached) {
  TableConfig config = config_with(SelectorKind::kUniform, 8);
  config.rate_limiter.min_size_to_sample = 2;
  Table table(config);
  SampledBatch batch;
  EXPECT_EQ(table.try_sample({1, 0.0}, batch), ReplayStatus::kTimedOut);
  insert_value(table, 1);
  EXPECT_EQ(table.sample({1, 0.0}, batch, std::chrono::milliseconds(5)), ReplayStatus::kTimedOut);
  ReplayStatus status = ReplayStatus::kClosed;
  std::thread sampler([&] { status = table.sample({1, 0.0}, batch); });
  insert_value(table, 2);
  sampler.join();
  EXPECT_EQ(status, ReplayStatus::kOk);
  EXPECT_EQ(batch.table_size, 2U);
}

TEST(Table, InsertWaitsWhileSamplingFallsBehindTheRatio) {
  TableConfig config = config_with(SelectorKind::kUniform, 100);
  config.rate_limiter = {1, 1.0, 1.0};  // max_diff 2
  Table table(config);
  ValueTransition t(5, kWords);
  EXPECT_EQ(table.try_insert(t.transition, 1.0), ReplayStatus::kOk);
  EXPECT_EQ(table.try_insert(t.transition, 1.0), ReplayStatus::kOk);
  EXPECT_EQ(table.try_insert(t.transition, 1.0), ReplayStatus::kTimedOut);
  EXPECT_EQ(table.insert(t.transition, 1.0, std::chrono::milliseconds(5)), ReplayStatus::kTimedOut);
  SampledBatch batch;
  ASSERT_EQ(table.try_sample({1, 0.0}, batch), ReplayStatus::kOk);
  EXPECT_EQ(table.try_insert(t.transition, 1.0), ReplayStatus::kOk);
  EXPECT_EQ(table.info().inserts, 3U);
}

TEST(Table, CloseWakesBlockedCallsAndFailsLaterOnes) {
  Table table(config_with(SelectorKind::kUniform, 8));
  SampledBatch batch;
  ReplayStatus status = ReplayStatus::kOk;
  std::thread sampler([&] { status = table.sample({4, 0.0}, batch); });
  table.close();
  sampler.join();
  EXPECT_EQ(status, ReplayStatus::kClosed);
  ValueTransition t(1, kWords);
  EXPECT_EQ(table.insert(t.transition, 1.0), ReplayStatus::kClosed);
  EXPECT_EQ(table.try_sample({1, 0.0}, batch), ReplayStatus::kClosed);
  EXPECT_TRUE(table.closed());
}

TEST(Table, RejectsInvalidConfigs) {
  EXPECT_THROW(Table(config_with(SelectorKind::kUniform, 0)), std::invalid_argument);
  TableConfig tiny = config_with(SelectorKind::kUniform, 8);
  tiny.max_bytes = 10;
  EXPECT_THROW((Table(tiny)), std::invalid_argument);
  TableConfig bad_limiter = config_with(SelectorKind::kUniform, 8);
  bad_limiter.rate_limiter = {1, 4.0, 0.0};
  EXPECT_THROW((Table(bad_limiter)), std::invalid_argument);
}

}  // namespace
}  // namespace tagflow::replay
