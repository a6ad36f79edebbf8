// Stress tests: several inserters, samplers and priority updaters on one table at once. Run them
// under the tsan preset; in every build they check that no sampled row is torn.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "rl/replay/sum_tree.hpp"
#include "rl/replay/table.hpp"
#include "rl/replay/table_writer.hpp"
#include "tests/rl/replay/table_fixtures.hpp"

namespace tagflow::replay {
namespace {

using testing::row_value;
using testing::ValueTransition;

constexpr std::size_t kWords = 64;
constexpr int kInserters = 3;
constexpr int kSamplers = 2;
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
constexpr std::uint32_t kPerInserter = 3000;
#else
constexpr std::uint32_t kPerInserter = 20000;
#endif

TableConfig stress_config(SelectorKind selector) {
  TableConfig config;
  config.spec = testing::spec_of(kWords);
  config.max_items = 256;  // small: eviction runs all the time
  config.selector = selector;
  return config;
}

// Inserters (plain or stream writers), samplers checking every row, and an updater feeding
// sampled keys back with new priorities, until the inserters are done.
void run_stress(SelectorKind selector, bool use_writers) {
  Table table(stress_config(selector));
  std::atomic<int> inserters_left{kInserters};
  std::atomic<std::uint64_t> torn{0};
  std::atomic<std::uint64_t> sampled{0};
  std::vector<std::thread> threads;
  for (int id = 0; id < kInserters; ++id) {
    threads.emplace_back([&, id] {
      TableWriter writer(table);
      for (std::uint32_t i = 0; i < kPerInserter; ++i) {
        // Each inserter's values form a chain (v, v+1, ...) so writers share frames.
        ValueTransition t(static_cast<std::uint32_t>(id) * 1'000'000U + i, kWords);
        const double priority = 0.5 + static_cast<double>(i % 5);
        const ReplayStatus status = use_writers ? writer.insert(t.transition, priority)
                                                : table.insert(t.transition, priority);
        ASSERT_EQ(status, ReplayStatus::kOk);
      }
      inserters_left.fetch_sub(1, std::memory_order_release);
    });
  }
  for (int id = 0; id < kSamplers; ++id) {
    threads.emplace_back([&, id] {
      SampledBatch batch;
      std::vector<double> priorities;
      // Until the inserters are done, and at least one batch each whatever the scheduling.
      bool sampled_once = false;
      while (inserters_left.load(std::memory_order_acquire) > 0 || !sampled_once) {
        const ReplayStatus status = table.sample({32, 0.4}, batch, std::chrono::milliseconds(20));
        if (status != ReplayStatus::kOk) continue;
        sampled_once = true;
        for (std::size_t b = 0; b < batch.batch_size; ++b) {
          if (row_value(batch, b, kWords) < 0) torn.fetch_add(1);
        }
        sampled.fetch_add(batch.batch_size);
        if (id == 0) {  // this sampler also plays the learner's part
          priorities.assign(batch.batch_size, 0.0);
          for (std::size_t b = 0; b < batch.batch_size; ++b) {
            priorities[b] = static_cast<double>(b % 3);
          }
          (void)table.update_priorities(batch.keys, priorities);
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(torn.load(), 0U);
  EXPECT_GT(sampled.load(), 0U);
  const TableInfo info = table.info();
  EXPECT_EQ(info.inserts, std::uint64_t{kInserters} * kPerInserter);
  EXPECT_EQ(info.size, 256U);
  EXPECT_EQ(info.evictions, info.inserts - 256);
  if (!use_writers) {
    EXPECT_EQ(info.frames, 2 * info.size);
  }
}

TEST(TableConcurrency, InsertersAndSamplersNeverSeeATornItemUniform) {
  run_stress(SelectorKind::kUniform, false);
}

TEST(TableConcurrency, InsertersAndSamplersNeverSeeATornItemPrioritized) {
  run_stress(SelectorKind::kPrioritized, false);
}

TEST(TableConcurrency, StreamWritersShareFramesWhileSamplersRead) {
  run_stress(SelectorKind::kPrioritized, true);
}

// Two inserters, two samplers (one also the learner: it sends new priorities, a third of them 0,
// for what it sampled) and sample_many on a third thread, all on one prioritized table. A sample
// must never hold a priority-0 item (the tree and the items' priorities are updated together) or
// a probability that does not match its priority; at the end the table's total must equal the
// sum over live items of their last priority^α, summed from scratch.
TEST(TableConcurrency, ParallelInsertSampleAndUpdateKeepTheTreeExact) {
  TableConfig config = stress_config(SelectorKind::kPrioritized);
  config.priority_exponent = 1.0;
  Table table(config);
  std::atomic<int> inserters_left{2};
  std::atomic<std::uint64_t> bad{0};
  std::atomic<std::uint64_t> sampled{0};
  const auto check = [&](const SampledBatch& batch) {
    for (std::size_t b = 0; b < batch.batch_size; ++b) {
      if (batch.priorities[b] <= 0.0 || batch.probabilities[b] <= 0.0) bad.fetch_add(1);
      if (row_value(batch, b, kWords) < 0) bad.fetch_add(1);
    }
    sampled.fetch_add(batch.batch_size);
  };
  std::vector<std::thread> threads;
  for (int id = 0; id < 2; ++id) {
    threads.emplace_back([&, id] {
      for (std::uint32_t i = 0; i < kPerInserter; ++i) {
        ValueTransition t(static_cast<std::uint32_t>(id) * 1'000'000U + i, kWords);
        ASSERT_EQ(table.insert(t.transition, 1.0 + i % 7), ReplayStatus::kOk);
      }
      inserters_left.fetch_sub(1, std::memory_order_release);
    });
  }
  for (int id = 0; id < 2; ++id) {
    threads.emplace_back([&, id] {
      SampledBatch batch;
      std::vector<double> priorities;
      std::uint64_t round = 0;
      while (inserters_left.load(std::memory_order_acquire) > 0 || round == 0) {
        if (table.sample({64, 0.4}, batch, std::chrono::milliseconds(20)) != ReplayStatus::kOk) {
          continue;
        }
        check(batch);
        if (id == 0) {
          priorities.resize(batch.batch_size);
          for (std::size_t b = 0; b < batch.batch_size; ++b) {
            priorities[b] = static_cast<double>((b + round) % 3);
          }
          (void)table.update_priorities(batch.keys, priorities);
        }
        ++round;
      }
    });
  }
  threads.emplace_back([&] {
    std::vector<SampledBatch> batches(3);
    const ParallelFor two = [](std::size_t count, const std::function<void(std::size_t)>& body) {
      std::thread helper([&] {
        for (std::size_t i = 1; i < count; i += 2) body(i);
      });
      for (std::size_t i = 0; i < count; i += 2) body(i);
      helper.join();
    };
    while (inserters_left.load(std::memory_order_acquire) > 0) {
      const std::size_t n = table.sample_many({32, 0.4}, batches, two);
      for (std::size_t i = 0; i < n; ++i) check(batches[i]);
    }
  });
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(bad.load(), 0U);
  EXPECT_GT(sampled.load(), 0U);
  const TableInfo info = table.info();
  EXPECT_EQ(info.size, 256U);
  std::vector<double> leaves(256, 0.0);
  for (ItemKey key = info.next_key - 256; key < info.next_key; ++key) {
    leaves[key % 256] = table.priority(key);
  }
  SumTree fresh(256);
  fresh.assign(leaves);
  EXPECT_EQ(info.total_priority, fresh.total());
}

TEST(TableConcurrency, RateLimitedProducersAndConsumersShutDownWithoutDeadlock) {
  TableConfig config = stress_config(SelectorKind::kUniform);
  config.rate_limiter = {10, 4.0, 64.0};
  Table table(config);
  std::atomic<std::uint64_t> inserted{0};
  std::vector<std::thread> inserters;
  for (int id = 0; id < 2; ++id) {
    inserters.emplace_back([&, id] {
      for (std::uint32_t i = 0;; ++i) {
        ValueTransition t(static_cast<std::uint32_t>(id) * 1'000'000U + i, kWords);
        const ReplayStatus status = table.insert(t.transition, 1.0);  // blocks, no timeout
        if (status == ReplayStatus::kClosed) return;
        ASSERT_EQ(status, ReplayStatus::kOk);
        inserted.fetch_add(1);
      }
    });
  }
  std::vector<std::thread> samplers;
  for (int id = 0; id < 2; ++id) {
    samplers.emplace_back([&] {
      SampledBatch batch;
      for (int round = 0; round < 300; ++round) {
        ASSERT_EQ(table.sample({16, 0.0}, batch), ReplayStatus::kOk);  // blocks, no timeout
        for (std::size_t b = 0; b < batch.batch_size; ++b) {
          ASSERT_GE(row_value(batch, b, kWords), 0);
        }
      }
    });
  }
  for (std::thread& sampler : samplers) sampler.join();
  // Inserters are now blocked by the ratio (or about to be); close must release them.
  table.close();
  for (std::thread& inserter : inserters) inserter.join();
  const TableInfo info = table.info();
  EXPECT_EQ(info.sampled_items, 2U * 300U * 16U);
  // The ratio held: inserts · 4 − sampled stays within the tolerance (plus one batch per
  // sampler and one insert per inserter in flight).
  const double diff =
      4.0 * static_cast<double>(info.inserts) - static_cast<double>(info.sampled_items);
  EXPECT_LE(diff, 4.0 * 10 + 64.0 + 2 * 4.0);
  EXPECT_GE(diff, 4.0 * 10 - 64.0 - 2 * 16.0);
  SampledBatch batch;
  EXPECT_EQ(table.sample({1, 0.0}, batch), ReplayStatus::kClosed);
}

TEST(TableConcurrency, CheckpointWhileInsertingSavesOnlyWholeItems) {
  Table table(stress_config(SelectorKind::kPrioritized));
  std::atomic<bool> stop{false};
  std::thread inserter([&] {
    TableWriter writer(table);
    for (std::uint32_t i = 0; !stop.load(std::memory_order_acquire); ++i) {
      ValueTransition t(i, kWords);
      ASSERT_EQ(writer.insert(t.transition, 1.0 + i % 3), ReplayStatus::kOk);
    }
  });
  const std::string path =
      ::testing::TempDir() + "replay_concurrent_" + std::to_string(::getpid()) + ".ckpt";
  // Checkpoints taken while the inserter runs, each of a table that already holds items (the
  // first waits for the inserter's first ones), so every round has rows to check.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (table.info().size == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  int checked = 0;
  for (int round = 0; round < 5; ++round) {
    table.save_checkpoint(path);
    const auto restored = Table::load_checkpoint(path);
    const TableInfo info = restored->info();
    ASSERT_GT(info.size, 0U) << "round " << round;
    SampledBatch batch;
    ASSERT_EQ(restored->try_sample({64, 0.4}, batch), ReplayStatus::kOk);
    ASSERT_GT(batch.batch_size, 0U);
    for (std::size_t b = 0; b < batch.batch_size; ++b) {
      ASSERT_GE(row_value(batch, b, kWords), 0);
    }
    ++checked;
  }
  EXPECT_EQ(checked, 5);
  stop.store(true, std::memory_order_release);
  inserter.join();
  std::remove(path.c_str());
}

}  // namespace
}  // namespace tagflow::replay
