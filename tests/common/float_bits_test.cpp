// Tests of common/float_bits.hpp: the block masks (the SSE2 form and the plain-loop one) agree
// with a test of each float, for every pattern the scans meet (zeros of both signs, NaN,
// subnormals, short tail blocks).
#include "common/float_bits.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <iterator>
#include <limits>
#include <random>
#include <vector>

namespace tagflow {
namespace {

std::uint32_t reference_mask(const float* x, std::size_t n, std::uint32_t ignored) {
  std::uint32_t mask = 0;
  for (std::size_t k = 0; k < n; ++k) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, x + k, sizeof bits);
    if ((bits & ~ignored) != 0) mask |= 1U << k;
  }
  return mask;
}

TEST(FloatBits, MasksMatchATestOfEachFloatForEverySpecialValueAndTail) {
  const float specials[] = {0.0F,
                            -0.0F,
                            1.0F,
                            -1.0F,
                            std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::denorm_min(),
                            -std::numeric_limits<float>::denorm_min(),
                            std::numeric_limits<float>::infinity()};
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> pick(0, 2 * static_cast<int>(std::size(specials)));
  for (int trial = 0; trial < 2000; ++trial) {
    float block[kFloatBlock];
    for (float& f : block) {
      const int k = pick(rng);  // half of the draws are +0.0: mostly-zero blocks
      f = k < static_cast<int>(std::size(specials)) ? specials[k] : 0.0F;
    }
    for (std::size_t n = 1; n <= kFloatBlock; ++n) {
      for (const std::uint32_t ignored : {0U, 0x80000000U}) {
        ASSERT_EQ(float_mask(block, n, ignored), reference_mask(block, n, ignored))
            << "trial " << trial << ", n " << n << ", ignored " << ignored;
      }
    }
    for (const std::uint32_t ignored : {0U, 0x80000000U}) {
      ASSERT_EQ(float_block_mask_portable(block, ignored),
                reference_mask(block, kFloatBlock, ignored))
          << "trial " << trial << ", ignored " << ignored;
    }
  }
}

TEST(FloatBits, NegativeZeroCountsOnlyWhenTheSignIsNotIgnored) {
  float block[kFloatBlock] = {};
  block[3] = -0.0F;
  block[9] = 2.5F;
  EXPECT_EQ(float_block_mask(block), (1U << 3) | (1U << 9));
  EXPECT_EQ(float_block_mask(block, 0x80000000U), 1U << 9);
  EXPECT_EQ(lowest_bit(float_block_mask(block)), 3);
  const float zeros[kFloatBlock] = {};
  EXPECT_EQ(float_block_mask(zeros), 0U);
  float negative_zeros[kFloatBlock];
  for (float& f : negative_zeros) f = -0.0F;
  EXPECT_EQ(float_block_mask(negative_zeros), 0xFFFFU);
  EXPECT_EQ(float_block_mask(negative_zeros, 0x80000000U), 0U);
  // A tail block reads only its n floats.
  std::vector<float> tail(5, 1.0F);
  EXPECT_EQ(float_mask(tail.data(), tail.size()), 0x1FU);
}

TEST(FloatBits, ListSetBitsWritesEachSetBitsPositionLowestFirst) {
  std::uint32_t positions[kFloatBlock + 1];
  std::fill(std::begin(positions), std::end(positions), 0xDEADBEEFU);
  EXPECT_EQ(list_set_bits(32, (1U << 0) | (1U << 5) | (1U << 15), positions), 3U);
  EXPECT_EQ(positions[0], 32U);
  EXPECT_EQ(positions[1], 37U);
  EXPECT_EQ(positions[2], 47U);
  EXPECT_EQ(positions[3], 0xDEADBEEFU);  // nothing past the count
  EXPECT_EQ(list_set_bits(7, 0U, positions), 0U);
  EXPECT_EQ(positions[0], 32U);
  EXPECT_EQ(list_set_bits(0, 0xFFFFU, positions), kFloatBlock);
  for (std::size_t k = 0; k < kFloatBlock; ++k) EXPECT_EQ(positions[k], k);
  EXPECT_EQ(positions[kFloatBlock], 0xDEADBEEFU);
  // The positions of a scan of blocks are the non-zero floats' indices.
  std::vector<float> row(70, 0.0F);
  for (const std::size_t k : {1U, 16U, 17U, 40U, 69U}) row[k] = 1.0F;
  std::vector<std::uint32_t> set(row.size());
  std::size_t count = 0;
  for (std::size_t at = 0; at < row.size(); at += kFloatBlock) {
    const std::size_t n = std::min(kFloatBlock, row.size() - at);
    count += list_set_bits(at, float_mask(row.data() + at, n), set.data() + count);
  }
  set.resize(count);
  EXPECT_EQ(set, (std::vector<std::uint32_t>{1, 16, 17, 40, 69}));
}

}  // namespace
}  // namespace tagflow
