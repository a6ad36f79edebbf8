#include "rl/replay/binary_sum_tree.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "tests/rl/replay/chi_square.hpp"

namespace tagflow::replay {
namespace {

TEST(BinarySumTree, TotalIsTheSumOfTheLeaves) {
  BinarySumTree tree(1000);
  double sum = 0.0;
  for (std::size_t i = 0; i < 1000; ++i) {
    tree.set(i, static_cast<double>(i % 5));
    sum += static_cast<double>(i % 5);
  }
  EXPECT_DOUBLE_EQ(tree.total(), sum);
  EXPECT_EQ(tree.get(9), 4.0);
}

TEST(BinarySumTree, StratifiedSamplingFrequenciesMatchPriorities) {
  constexpr std::size_t kLeaves = 100;
  BinarySumTree tree(kLeaves);
  std::vector<double> expected(kLeaves);
  double total = 0.0;
  for (std::size_t i = 0; i < kLeaves; ++i) {
    const double p = i % 9 == 0 ? 0.0 : static_cast<double>(i % 13 + 1);
    tree.set(i, p);
    expected[i] = p;
    total += p;
  }
  std::vector<double> observed(kLeaves, 0.0);
  std::vector<double> uniforms(128);
  std::vector<std::size_t> leaves(128);
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int batch = 0; batch < 1000; ++batch) {
    for (double& u : uniforms) u = unit(rng);
    tree.sample_stratified(uniforms.data(), uniforms.size(), leaves.data());
    for (std::size_t leaf : leaves) observed[leaf] += 1.0;
  }
  for (std::size_t i = 0; i < kLeaves; ++i) {
    expected[i] *= 128000.0 / total;
    if (expected[i] == 0.0) {
      EXPECT_EQ(observed[i], 0.0);
    }
  }
  EXPECT_LT(testing::chi_square(observed, expected),
            testing::chi_square_critical_999(kLeaves - kLeaves / 9 - 2));
}

}  // namespace
}  // namespace tagflow::replay
