// Table's lazy writing (table.hpp): queued inserts and priority updates applied in batches leave
// the table exactly where applying each write at once would, and sample_many's batches do not
// depend on the threads that resolve them.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <thread>
#include <vector>

#include "rl/replay/prioritized_selector.hpp"
#include "rl/replay/table.hpp"
#include "tests/rl/replay/split_mix.hpp"
#include "tests/rl/replay/table_fixtures.hpp"

namespace tagflow::replay {
namespace {

using testing::ValueTransition;

constexpr std::size_t kLazyWords = 2;

TableConfig prioritized_config(std::size_t max_items) {
  TableConfig config;
  config.spec = testing::spec_of(kLazyWords);
  config.max_items = max_items;
  config.selector = SelectorKind::kPrioritized;
  config.priority_exponent = 0.6;
  return config;
}

using testing::SplitMix;

// 0 one time in 8, else across twelve orders of magnitude.
double spread_priority(SplitMix& rng) {
  const std::uint64_t r = rng.next();
  if (r % 8 == 0) return 0.0;
  return static_cast<double>((r >> 8) % 1000 + 1) *
         std::pow(10.0, static_cast<double>((r >> 20) % 12) - 6);
}

// 10^7 operations (release build; 10^6 under sanitizers) on a table of 4096 items: rounds of 64
// inserts (evicting as many), 256 priority updates of sampled keys, and a sample of 256, each
// item counted as one operation. At the end the table's total priority and every item's
// sampling probability must equal those of a sum tree built from scratch from the live items'
// last priorities: lazy batches leave no drift and no write behind.
TEST(TableLazyWriting, TenMillionMixedOperationsMatchAFromScratchTree) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  constexpr std::uint64_t kOperations = 1'000'000;
#else
  constexpr std::uint64_t kOperations = 10'000'000;
#endif
  constexpr std::size_t kItems = 4096;
  Table table(prioritized_config(kItems));
  SplitMix rng{7};
  std::vector<double> priorities(256);
  SampledBatch batch;
  std::uint64_t operations = 0;
  std::uint64_t zero_draws = 0;
  std::uint32_t value = 0;
  std::vector<double> by_slot(kItems);
  auto remember = [&](ItemKey key, double p) { by_slot[key % kItems] = p; };
  while (operations < kOperations) {
    for (int i = 0; i < 64; ++i) {
      ValueTransition t(value++, kLazyWords);
      ItemKey key = 0;
      const double p = spread_priority(rng) + 1e-3;  // new items can be sampled
      ASSERT_EQ(table.insert(t.transition, p, kWaitForever, &key), ReplayStatus::kOk);
      remember(key, p);
    }
    ASSERT_EQ(table.try_sample({256, 0.4}, batch), ReplayStatus::kOk);
    for (std::size_t b = 0; b < batch.batch_size; ++b) {
      zero_draws += batch.priorities[b] == 0.0 ? 1 : 0;
      priorities[b] = spread_priority(rng);
      remember(batch.keys[b], priorities[b]);
    }
    EXPECT_EQ(table.update_priorities(batch.keys, priorities), batch.batch_size);
    operations += 64 + 2 * 256;
  }
  EXPECT_EQ(zero_draws, 0U);
  const TableInfo info = table.info();
  ASSERT_EQ(info.size, kItems);
  PrioritizedSelector fresh(kItems, 0.6);
  for (std::size_t slot = 0; slot < kItems; ++slot) fresh.insert(slot, by_slot[slot]);
  EXPECT_EQ(info.total_priority, fresh.total());
  for (ItemKey key = info.next_key - kItems; key < info.next_key; ++key) {
    ASSERT_EQ(table.priority(key), by_slot[key % kItems]) << "key " << key;
  }
  // Probabilities of a fresh sample are p^α over the from-scratch total, bit for bit.
  ASSERT_EQ(table.try_sample({256, 0.4}, batch), ReplayStatus::kOk);
  for (std::size_t b = 0; b < batch.batch_size; ++b) {
    EXPECT_EQ(batch.probabilities[b], std::pow(batch.priorities[b], 0.6) / fresh.total());
  }
}

TEST(TableLazyWriting, AQueuedUpdateIsVisibleToPriorityAndToTheNextSample) {
  Table table(prioritized_config(64));
  std::vector<ItemKey> keys;
  for (std::uint32_t v = 0; v < 10; ++v) {
    ValueTransition t(v, kLazyWords);
    ItemKey key = 0;
    ASSERT_EQ(table.insert(t.transition, 1.0, kWaitForever, &key), ReplayStatus::kOk);
    keys.push_back(key);
  }
  // All but key 3 to 0: a sample right after must draw only key 3.
  std::vector<double> priorities(keys.size(), 0.0);
  priorities[3] = 2.5;
  EXPECT_EQ(table.update_priorities(keys, priorities), keys.size());
  EXPECT_EQ(table.priority(keys[3]), 2.5);
  EXPECT_EQ(table.priority(keys[4]), 0.0);
  SampledBatch batch;
  ASSERT_EQ(table.try_sample({32, 0.4}, batch), ReplayStatus::kOk);
  for (std::size_t b = 0; b < batch.batch_size; ++b) {
    EXPECT_EQ(batch.keys[b], keys[3]);
    EXPECT_EQ(batch.priorities[b], 2.5);
    EXPECT_EQ(batch.probabilities[b], 1.0);
  }
}

// Two identical tables: one resolves sample_many on this thread, the other on a thread per
// batch. Same keys, probabilities, rows and counts.
TEST(TableLazyWriting, SampleManyGivesTheSameBatchesWhateverThreadsResolveThem) {
  Table serial(prioritized_config(512));
  Table parallel(prioritized_config(512));
  SplitMix rng{11};
  for (std::uint32_t v = 0; v < 700; ++v) {
    ValueTransition t(v, kLazyWords);
    const double p = spread_priority(rng) + 0.01;
    ASSERT_EQ(serial.insert(t.transition, p), ReplayStatus::kOk);
    ASSERT_EQ(parallel.insert(t.transition, p), ReplayStatus::kOk);
  }
  const ParallelFor threads = [](std::size_t count, const std::function<void(std::size_t)>& body) {
    std::vector<std::thread> pool;
    for (std::size_t i = 0; i < count; ++i) pool.emplace_back(body, i);
    for (std::thread& thread : pool) thread.join();
  };
  std::vector<SampledBatch> a(4);
  std::vector<SampledBatch> b(4);
  for (int round = 0; round < 3; ++round) {
    ASSERT_EQ(serial.sample_many({64, 0.4}, a), 4U);
    ASSERT_EQ(parallel.sample_many({64, 0.4}, b, threads), 4U);
    for (std::size_t i = 0; i < 4; ++i) {
      EXPECT_EQ(a[i].keys, b[i].keys);
      EXPECT_EQ(a[i].probabilities, b[i].probabilities);
      EXPECT_EQ(a[i].weights, b[i].weights);
      EXPECT_EQ(a[i].times_sampled, b[i].times_sampled);
      EXPECT_EQ(a[i].observations, b[i].observations);
    }
  }
  // And the same as four try_sample calls on a third table.
  Table single(prioritized_config(512));
  SplitMix again{11};
  for (std::uint32_t v = 0; v < 700; ++v) {
    ValueTransition t(v, kLazyWords);
    ASSERT_EQ(single.insert(t.transition, spread_priority(again) + 0.01), ReplayStatus::kOk);
  }
  SampledBatch one;
  for (int round = 0; round < 3; ++round) {
    for (std::size_t i = 0; i < 4; ++i)
      ASSERT_EQ(single.try_sample({64, 0.4}, one), ReplayStatus::kOk);
  }
  EXPECT_EQ(one.keys, a[3].keys);
}

TEST(TableLazyWriting, SampleManyStopsWhereTheRateLimiterDoes) {
  TableConfig config = prioritized_config(64);
  config.rate_limiter = {4, 1.0, 8.0};  // about one sampled item per insert, ±8
  Table table(config);
  for (std::uint32_t v = 0; v < 8; ++v) {
    ValueTransition t(v, kLazyWords);
    ASSERT_EQ(table.insert(t.transition, 1.0), ReplayStatus::kOk);
  }
  std::vector<SampledBatch> out(10);
  const std::size_t filled = table.sample_many({4, 0.0}, out);
  EXPECT_GT(filled, 0U);
  EXPECT_LT(filled, 10U);
  EXPECT_EQ(table.info().sampled_items, 4 * filled);
}

}  // namespace
}  // namespace tagflow::replay
