#include "rl/replay/selector.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "tests/rl/replay/chi_square.hpp"

namespace tagflow::replay {
namespace {

std::vector<double> draw_counts(Selector& selector, std::size_t capacity, std::size_t batches,
                                std::size_t batch_size, std::vector<double>* probabilities_seen) {
  ReplayRng rng(11);
  std::vector<double> counts(capacity, 0.0);
  std::vector<std::size_t> slots;
  std::vector<double> probabilities;
  if (probabilities_seen != nullptr) probabilities_seen->assign(capacity, -1.0);
  for (std::size_t b = 0; b < batches; ++b) {
    selector.select(batch_size, rng, slots, probabilities);
    EXPECT_EQ(slots.size(), batch_size);
    for (std::size_t i = 0; i < slots.size(); ++i) {
      counts[slots[i]] += 1.0;
      if (probabilities_seen != nullptr) (*probabilities_seen)[slots[i]] = probabilities[i];
    }
  }
  return counts;
}

TEST(UniformSelector, DrawsEveryPresentItemEquallyOften) {
  auto selector = make_selector(SelectorKind::kUniform, 64, 0.0);
  for (std::size_t slot = 0; slot < 64; slot += 2) selector->insert(slot, 1.0);  // 32 items
  selector->remove(10);
  EXPECT_EQ(selector->size(), 31U);
  std::vector<double> probabilities;
  const auto counts = draw_counts(*selector, 64, 400, 64, &probabilities);
  std::vector<double> expected(64, 0.0);
  for (std::size_t slot = 0; slot < 64; slot += 2) {
    if (slot != 10) {
      expected[slot] = 400.0 * 64.0 / 31.0;
      EXPECT_DOUBLE_EQ(probabilities[slot], 1.0 / 31.0);
    }
  }
  for (std::size_t slot = 0; slot < 64; ++slot) {
    if (expected[slot] == 0.0) {
      EXPECT_EQ(counts[slot], 0.0) << slot;
    }
  }
  EXPECT_LT(testing::chi_square(counts, expected), testing::chi_square_critical_999(30));
}

class PrioritizedSelection : public ::testing::TestWithParam<bool> {};
INSTANTIATE_TEST_SUITE_P(KaryAndBinaryTrees, PrioritizedSelection, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& tree) {
                           return tree.param ? "binary" : "kary";
                         });

TEST_P(PrioritizedSelection, DrawsItemsInProportionToPriorityToTheAlpha) {
  const double alpha = 0.6;
  auto selector = make_selector(SelectorKind::kPrioritized, 50, alpha, GetParam());
  std::vector<double> expected(50, 0.0);
  double total = 0.0;
  for (std::size_t slot = 0; slot < 50; ++slot) {
    const double priority = slot % 7 == 3 ? 0.0 : 0.5 + static_cast<double>(slot);
    selector->insert(slot, priority);
    expected[slot] = priority > 0.0 ? std::pow(priority, alpha) : 0.0;
    total += expected[slot];
  }
  std::vector<double> probabilities;
  const auto counts = draw_counts(*selector, 50, 1000, 100, &probabilities);
  std::size_t positive = 0;
  for (std::size_t slot = 0; slot < 50; ++slot) {
    if (expected[slot] == 0.0) {
      EXPECT_EQ(counts[slot], 0.0) << "zero priority drawn: " << slot;
    } else {
      ++positive;
      EXPECT_NEAR(probabilities[slot], expected[slot] / total, 1e-12);
    }
    expected[slot] *= 100000.0 / total;
  }
  EXPECT_LT(testing::chi_square(counts, expected), testing::chi_square_critical_999(positive - 1));
}

TEST_P(PrioritizedSelection, UpdatesAndRemovalsChangeTheDistribution) {
  auto selector = make_selector(SelectorKind::kPrioritized, 4, 1.0, GetParam());
  for (std::size_t slot = 0; slot < 4; ++slot) selector->insert(slot, 1.0);
  const std::vector<std::size_t> slots = {0, 1};
  const std::vector<double> priorities = {0.0, 3.0};
  selector->update_batch(slots.data(), priorities.data(), 2);
  selector->remove(2);
  const auto counts = draw_counts(*selector, 4, 100, 40, nullptr);
  EXPECT_EQ(counts[0], 0.0);
  EXPECT_EQ(counts[2], 0.0);
  EXPECT_NEAR(counts[1] / (counts[1] + counts[3]), 0.75, 0.01);
}

TEST_P(PrioritizedSelection, CannotSelectWhenEveryPriorityIsZero) {
  auto selector = make_selector(SelectorKind::kPrioritized, 4, 0.0, GetParam());
  selector->insert(0, 0.0);  // 0^0 counts as 0: never drawn
  EXPECT_EQ(selector->size(), 1U);
  EXPECT_FALSE(selector->can_select());
  selector->update(0, 2.0);
  EXPECT_TRUE(selector->can_select());
}

TEST(OrderedSelector, FifoReturnsOldestItemsFirstAndLifoNewest) {
  auto fifo = make_selector(SelectorKind::kFifo, 8, 0.0);
  auto lifo = make_selector(SelectorKind::kLifo, 8, 0.0);
  for (std::size_t slot : {5, 2, 7, 1}) {
    fifo->insert(slot, 1.0);
    lifo->insert(slot, 1.0);
  }
  fifo->remove(2);
  lifo->remove(2);
  ReplayRng rng(1);
  std::vector<std::size_t> slots;
  std::vector<double> probabilities;
  fifo->select(5, rng, slots, probabilities);
  EXPECT_EQ(slots, (std::vector<std::size_t>{5, 7, 1, 5, 7}));
  EXPECT_EQ(probabilities, std::vector<double>(5, 1.0));
  lifo->select(4, rng, slots, probabilities);
  EXPECT_EQ(slots, (std::vector<std::size_t>{1, 7, 5, 1}));
}

TEST(Selector, NamesParseBackAndUnknownNamesAreRejected) {
  for (SelectorKind kind : {SelectorKind::kUniform, SelectorKind::kPrioritized, SelectorKind::kFifo,
                            SelectorKind::kLifo}) {
    EXPECT_EQ(parse_selector(selector_name(kind)), kind);
  }
  EXPECT_THROW((void)parse_selector("heap"), std::invalid_argument);
  EXPECT_THROW((void)make_selector(SelectorKind::kPrioritized, 4, -1.0), std::invalid_argument);
}

}  // namespace
}  // namespace tagflow::replay
