// Parker: no lost wake-ups between a waiter and a notifier, and timeouts return.
#include "reactors/parker.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace tagflow::reactors {
namespace {

TEST(Parker, WaitReturnsAtOnceWhenTheEpochAlreadyMoved) {
  Parker parker;
  const std::uint32_t seen = parker.epoch();
  parker.notify_all();
  parker.wait(seen);  // would block forever if the move were missed
  EXPECT_NE(parker.epoch(), seen);
}

TEST(Parker, WaitWithATimeoutReturnsWithoutANotify) {
  Parker parker;
  parker.wait(parker.epoch(), 1000000);  // 1 ms
  SUCCEED();
}

TEST(Parker, StressHandOffBetweenTwoThreadsLosesNoWakeUp) {
  // Two threads pass a token back and forth 20000 times, each parking until it is its turn.
  constexpr int kRounds = 20000;
  Parker parker;
  std::atomic<int> turn{0};
  auto play = [&](int me) {
    for (int round = 0; round < kRounds; ++round) {
      const int mine = 2 * round + me;
      for (;;) {
        const std::uint32_t epoch = parker.epoch();
        if (turn.load() == mine) break;
        parker.wait(epoch);
      }
      turn.store(mine + 1);
      parker.notify_all();
    }
  };
  std::thread other(play, 1);
  play(0);
  other.join();
  EXPECT_EQ(turn.load(), 2 * kRounds);
}

}  // namespace
}  // namespace tagflow::reactors
