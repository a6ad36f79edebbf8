#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>

#include "rl/replay/table.hpp"
#include "rl/replay/table_writer.hpp"
#include "tests/rl/replay/table_fixtures.hpp"

namespace tagflow::replay {
namespace {

using testing::ValueTransition;

constexpr std::size_t kCheckpointWords = 16;

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "replay_" + std::to_string(::getpid()) + "_" + name;
}

bool exists(const std::string& path) { return std::ifstream(path).good(); }

std::unique_ptr<Table> filled_table(SelectorKind selector = SelectorKind::kPrioritized) {
  TableConfig config;
  config.name = "checkpointed";
  config.spec = testing::spec_of(kCheckpointWords);
  config.max_items = 40;
  config.selector = selector;
  config.priority_exponent = 0.7;
  config.rate_limiter = {5, 2.0, 1000.0};
  config.seed = 1234;
  auto table = std::make_unique<Table>(config);
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> priority(0.0, 3.0);
  {
    TableWriter writer(*table);
    for (std::uint32_t v = 0; v < 60; ++v) {
      ValueTransition t(v % 17 == 0 ? v + 1000 : v,
                        kCheckpointWords);  // some resets, some shared frames
      EXPECT_EQ(writer.insert(t.transition, priority(rng)), ReplayStatus::kOk);
    }
  }
  SampledBatch batch;
  EXPECT_EQ(table->sample({16, 0.5}, batch), ReplayStatus::kOk);
  std::vector<double> updates;
  for (std::size_t b = 0; b < 16; ++b) updates.push_back(priority(rng) / 7.0);
  (void)table->update_priorities(batch.keys, updates);
  return table;
}

TEST(TableCheckpoint, RoundTripRestoresItemsKeysPrioritiesAndCounters) {
  const auto table = filled_table();
  const std::string path = temp_path("round_trip.ckpt");
  table->save_checkpoint(path);
  EXPECT_FALSE(exists(path + ".tmp"));
  const auto restored = Table::load_checkpoint(path);
  std::remove(path.c_str());

  const TableInfo before = table->info();
  const TableInfo after = restored->info();
  EXPECT_EQ(after.size, before.size);
  EXPECT_EQ(after.bytes, before.bytes);
  EXPECT_EQ(after.inserts, before.inserts);
  EXPECT_EQ(after.sampled_items, before.sampled_items);
  EXPECT_EQ(after.evictions, before.evictions);
  EXPECT_EQ(after.next_key, before.next_key);
  EXPECT_EQ(after.frames, before.frames);
  EXPECT_EQ(after.total_priority, before.total_priority);  // bit-exact, not approximately
  for (ItemKey key = 0; key < before.next_key; ++key) {
    EXPECT_EQ(restored->priority(key), table->priority(key)) << "key " << key;
  }
  EXPECT_EQ(restored->config().name, "checkpointed");
  EXPECT_EQ(restored->config().rate_limiter.samples_per_insert, 2.0);

  // Same state, same random generator: the next samples are identical, bytes included.
  SampledBatch a;
  SampledBatch b;
  ASSERT_EQ(table->sample({32, 0.5}, a), ReplayStatus::kOk);
  ASSERT_EQ(restored->sample({32, 0.5}, b), ReplayStatus::kOk);
  EXPECT_EQ(a.keys, b.keys);
  EXPECT_EQ(a.probabilities, b.probabilities);
  EXPECT_EQ(a.weights, b.weights);
  EXPECT_EQ(a.times_sampled, b.times_sampled);
  EXPECT_EQ(a.observations, b.observations);
  EXPECT_EQ(a.next_observations, b.next_observations);
  EXPECT_EQ(a.actions, b.actions);
  EXPECT_EQ(a.rewards, b.rewards);
  EXPECT_EQ(a.dones, b.dones);
  for (std::size_t i = 0; i < 32; ++i) EXPECT_GE(testing::row_value(b, i, kCheckpointWords), 0);

  // Keys continue where they stopped.
  ValueTransition t(5000, kCheckpointWords);
  ItemKey key_a = 0;
  ItemKey key_b = 0;
  ASSERT_EQ(table->insert(t.transition, 1.0, kWaitForever, &key_a), ReplayStatus::kOk);
  ASSERT_EQ(restored->insert(t.transition, 1.0, kWaitForever, &key_b), ReplayStatus::kOk);
  EXPECT_EQ(key_a, key_b);
  EXPECT_EQ(key_b, before.next_key);
}

// A table that has evicted (60 inserts into 40 items) and goes on inserting, evicting and sampling
// after the save: the restored one samples the same keys, round after round, with every selector.
// The uniform selector's draws depend on the order its removals left its items in, which the
// checkpoint keeps (restored oldest first, the keys differed from the first sample on).
TEST(TableCheckpoint, ARestoredTableThatHadEvictedSamplesWhatTheSavedOneWouldHave) {
  for (const SelectorKind selector : {SelectorKind::kUniform, SelectorKind::kPrioritized,
                                      SelectorKind::kFifo, SelectorKind::kLifo}) {
    SCOPED_TRACE(selector_name(selector));
    const auto table = filled_table(selector);
    ASSERT_GT(table->info().evictions, 0U);
    const std::string path = temp_path(std::string("evicted_") + selector_name(selector) + ".ckpt");
    table->save_checkpoint(path);
    const auto restored = Table::load_checkpoint(path);
    std::remove(path.c_str());
    for (std::uint32_t round = 0; round < 30; ++round) {
      ValueTransition t(7000 + round, kCheckpointWords);
      ASSERT_EQ(table->insert(t.transition, 1.0 + round), ReplayStatus::kOk);
      ASSERT_EQ(restored->insert(t.transition, 1.0 + round), ReplayStatus::kOk);
      SampledBatch a;
      SampledBatch b;
      ASSERT_EQ(table->sample({8, 0.5}, a), ReplayStatus::kOk);
      ASSERT_EQ(restored->sample({8, 0.5}, b), ReplayStatus::kOk);
      ASSERT_EQ(a.keys, b.keys) << "round " << round;
      ASSERT_EQ(a.observations, b.observations) << "round " << round;
    }
  }
}

TEST(TableCheckpoint, ASecondSaveReplacesTheFirstWhole) {
  const auto table = filled_table();
  const std::string path = temp_path("replace.ckpt");
  table->save_checkpoint(path);
  ValueTransition t(7, kCheckpointWords);
  ASSERT_EQ(table->insert(t.transition, 2.0), ReplayStatus::kOk);
  table->save_checkpoint(path);
  const auto restored = Table::load_checkpoint(path);
  std::remove(path.c_str());
  EXPECT_EQ(restored->info().next_key, table->info().next_key);
}

TEST(TableCheckpoint, FailuresAreReportedWithThePath) {
  const auto table = filled_table();
  EXPECT_THROW(table->save_checkpoint("/nonexistent-dir/x.ckpt"), std::runtime_error);
  EXPECT_THROW((void)Table::load_checkpoint(temp_path("missing.ckpt")), std::runtime_error);

  const std::string path = temp_path("truncated.ckpt");
  table->save_checkpoint(path);
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size() / 2));
  }
  try {
    (void)Table::load_checkpoint(path);
    FAIL() << "a truncated checkpoint loaded";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find(path), std::string::npos) << error.what();
  }
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << "not a checkpoint at all";
  }
  EXPECT_THROW((void)Table::load_checkpoint(path), std::runtime_error);
  std::remove(path.c_str());
}

// A table of about 5 MB is handed to the caller in pieces of at most 1 MiB, never whole, and the
// pieces are the file save_checkpoint() writes; a caller that fails part-way leaves the table
// usable.
TEST(TableCheckpoint, WriteCheckpointStreamsTheFileInPiecesOfAtMostOneMebibyte) {
  constexpr std::size_t kStreamedWords = 512;  // 2 KiB observations
  TableConfig config;
  config.name = "streamed";
  config.spec = testing::spec_of(kStreamedWords);
  config.max_items = 3000;
  config.rate_limiter = {1, 1.0, 1e9};
  auto table = std::make_unique<Table>(config);
  {
    TableWriter writer(*table);
    for (std::uint32_t v = 0; v < 2500; ++v) {
      ValueTransition t(v * 2, kStreamedWords);  // no shared frames: two per item
      ASSERT_EQ(writer.insert(t.transition, 1.0), ReplayStatus::kOk);
    }
  }
  std::string streamed;
  std::size_t pieces = 0, largest = 0;
  const std::uint64_t handed = table->write_checkpoint([&](std::string_view piece) {
    ++pieces;
    largest = std::max(largest, piece.size());
    streamed.append(piece);
  });
  EXPECT_EQ(handed, streamed.size());
  EXPECT_GT(streamed.size(), std::size_t{10'000'000});
  EXPECT_LE(largest, std::size_t{1} << 20);
  EXPECT_GE(pieces, streamed.size() >> 20);
  const std::string path = temp_path("streamed.ckpt");
  table->save_checkpoint(path);
  std::string saved;
  {
    std::ifstream in(path, std::ios::binary);
    saved.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::remove(path.c_str());
  EXPECT_TRUE(saved == streamed) << "the pieces are the file (" << saved.size() << " against "
                                 << streamed.size() << " bytes)";

  std::size_t calls = 0;
  EXPECT_THROW((void)table->write_checkpoint([&](std::string_view) {
    if (++calls == 3) throw std::runtime_error("disk full");
  }),
               std::runtime_error);
  ValueTransition t(9001, kStreamedWords);
  EXPECT_EQ(table->insert(t.transition, 1.0), ReplayStatus::kOk) << "inserts go on after it";
}

}  // namespace
}  // namespace tagflow::replay
