#include "rl/replay/rate_limiter.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace tagflow::replay {
namespace {

TEST(RateLimiter, RefusesSamplesBelowTheMinimumSize) {
  RateLimiter limiter({/*min_size_to_sample=*/3, /*samples_per_insert=*/0.0, 0.0});
  EXPECT_FALSE(limiter.can_sample(0));
  EXPECT_FALSE(limiter.can_sample(2));
  EXPECT_TRUE(limiter.can_sample(3));
  EXPECT_TRUE(limiter.can_insert(1000));  // no ratio: inserts always pass
}

TEST(RateLimiter, KeepsSamplesPerInsertWithinTheErrorBuffer) {
  // 2 sampled items per insert, tolerance 4 around the point reached at min size 10.
  RateLimiter limiter({10, 2.0, 4.0});
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(limiter.can_insert(static_cast<std::size_t>(i)));
    limiter.record_insert();
  }
  // diff = 20, max_diff = 24: two more inserts fit (22, 24), a third would exceed.
  EXPECT_TRUE(limiter.can_insert(10));
  limiter.record_insert();
  EXPECT_TRUE(limiter.can_insert(11));
  limiter.record_insert();
  EXPECT_FALSE(limiter.can_insert(12));
  // Samples run down diff to min_diff = 16; a sample is allowed while diff >= 16.
  EXPECT_TRUE(limiter.can_sample(12));
  limiter.record_sample(8);  // diff 16
  EXPECT_TRUE(limiter.can_sample(12));
  limiter.record_sample(1);  // diff 15
  EXPECT_FALSE(limiter.can_sample(12));
  EXPECT_TRUE(limiter.can_insert(12));
}

TEST(RateLimiter, AlwaysAllowsInsertOrSampleOnceMinSizeIsReached) {
  RateLimiter limiter({5, 3.0, 1.5});
  for (int step = 0; step < 10000; ++step) {
    const bool insert = limiter.can_insert(100);
    const bool sample = limiter.can_sample(100);
    ASSERT_TRUE(insert || sample) << "deadlock at step " << step;
    if (sample && (step % 3 != 0 || !insert)) {
      limiter.record_sample(static_cast<std::size_t>(step % 7 + 1));
    } else {
      limiter.record_insert();
    }
  }
}

TEST(RateLimiter, InsertsAreAllowedWhileBelowMinSizeWhateverTheCounters) {
  RateLimiter limiter({100, 1.0, 1.0});
  limiter.restore(1000, 0);  // far above max_diff, e.g. after evictions shrank the table
  EXPECT_TRUE(limiter.can_insert(50));
  EXPECT_FALSE(limiter.can_insert(100));
}

TEST(RateLimiter, RejectsAToleranceThatCouldDeadlock) {
  EXPECT_THROW(RateLimiter({1, 4.0, 1.0}), std::invalid_argument);
  EXPECT_THROW(RateLimiter({1, -1.0, 1.0}), std::invalid_argument);
  EXPECT_NO_THROW(RateLimiter({1, 4.0, 2.0}));
}

}  // namespace
}  // namespace tagflow::replay
