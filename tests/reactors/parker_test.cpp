// Parker: no lost wake-ups between a waiter and a notifier, and timeouts return.
#include "reactors/parker.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
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
  const std::uint32_t seen = parker.epoch();
  const auto start = std::chrono::steady_clock::now();
  parker.wait(seen, 1000000);  // 1 ms; without the timeout it would never return
  // Nothing woke it: it slept until the timeout (the kernel never ends a timed wait before it).
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(1));
  EXPECT_EQ(parker.epoch(), seen);
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
