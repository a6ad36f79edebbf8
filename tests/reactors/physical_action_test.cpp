// Physical actions: the door for other threads. Complete, ordered per producer, never early.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "reactors/reactors.hpp"

namespace tagflow::reactors {
namespace {

using std::chrono::milliseconds;

class Receiver : public Reactor {
 public:
  PhysicalAction<std::int64_t> input;
  std::vector<std::int64_t> values;
  std::vector<Tag> tags;
  std::size_t expected;
  Receiver(std::string name, Environment& env, std::size_t expected_events, std::size_t capacity)
      : Reactor(std::move(name), env),
        input("input", this, Duration::zero(), capacity),
        expected(expected_events) {
    reaction("receive").triggers(input).body([this] {
      values.push_back(input.get());
      tags.push_back(tag());
      if (values.size() == expected) request_stop();
    });
  }
};

class PhysicalActionWorkers : public ::testing::TestWithParam<unsigned> {};

TEST_P(PhysicalActionWorkers, EventsFromManyThreadsArriveCompleteAndInOrderPerThread) {
  constexpr int kThreads = 4;
  constexpr int kPerThread = 5000;
  EnvironmentConfig config;
  config.workers = GetParam();
  Environment env(config);
  auto& receiver = env.add<Receiver>("receiver", kThreads * kPerThread, 64);  // small: fills up
  env.assemble();
  std::vector<std::thread> producers;
  for (int t = 0; t < kThreads; ++t) {
    producers.emplace_back([&receiver, t] {
      for (int i = 0; i < kPerThread; ++i) {
        ASSERT_TRUE(receiver.input.schedule((std::int64_t{t} << 32) | i));
      }
    });
  }
  env.run();
  for (std::thread& producer : producers) producer.join();
  ASSERT_EQ(receiver.values.size(), static_cast<std::size_t>(kThreads * kPerThread));
  std::vector<std::int64_t> next(kThreads, 0);
  for (std::int64_t value : receiver.values) {
    const auto thread = static_cast<std::size_t>(value >> 32);
    ASSERT_EQ(value & 0xFFFFFFFF, next[thread]) << "out of order for producer " << thread;
    ++next[thread];
  }
  for (std::size_t i = 1; i < receiver.tags.size(); ++i) {
    ASSERT_LT(receiver.tags[i - 1], receiver.tags[i]) << "tags must strictly increase";
  }
}

INSTANTIATE_TEST_SUITE_P(Workers, PhysicalActionWorkers, ::testing::Values(1U, 2U));

TEST(PhysicalAction, TryScheduleFailsWhenTheQueueIsFull) {
  Environment env;
  auto& receiver = env.add<Receiver>("receiver", 16, 16);
  EXPECT_FALSE(receiver.input.try_schedule(0)) << "refused before assembly";
  env.assemble();
  int accepted = 0;
  while (receiver.input.try_schedule(accepted)) ++accepted;
  EXPECT_EQ(accepted, 16);
  env.run();
  EXPECT_EQ(receiver.values.size(), 16U);
  EXPECT_EQ(receiver.values.back(), 15);
}

// A queue asked for one event holds two (a ring of one cell took a second event into its full
// cell and lost both): the try_ variant fills it, and a burst through it loses nothing.
TEST(PhysicalAction, AQueueOfCapacityOneHoldsTwoAndLosesNoEvent) {
  {
    Environment env;
    auto& receiver = env.add<Receiver>("receiver", 2, 1);
    env.assemble();
    int accepted = 0;
    while (receiver.input.try_schedule(accepted)) ++accepted;
    EXPECT_EQ(accepted, 2);
    env.run();
    EXPECT_EQ(receiver.values, (std::vector<std::int64_t>{0, 1}));
  }
  constexpr int kEvents = 2000;
  Environment env;
  auto& receiver = env.add<Receiver>("receiver", kEvents, 1);
  env.assemble();
  std::thread producer([&receiver] {
    for (int i = 0; i < kEvents; ++i) ASSERT_TRUE(receiver.input.schedule(i));
  });
  env.run();
  producer.join();
  ASSERT_EQ(receiver.values.size(), static_cast<std::size_t>(kEvents));
  for (int i = 0; i < kEvents; ++i) ASSERT_EQ(receiver.values[static_cast<std::size_t>(i)], i);
}

TEST(PhysicalAction, ScheduleAtDeliversAtTheGivenTag) {
  EnvironmentConfig config;
  config.start_time_ns = 0;
  Environment env(config);
  auto& receiver = env.add<Receiver>("receiver", 2, 16);
  env.assemble();
  std::thread sender([&] {
    EXPECT_TRUE(receiver.input.schedule_at(Tag(5000000, 2), 42));
    EXPECT_TRUE(receiver.input.schedule_at(Tag(7000000, 0), 43));
  });
  env.run();
  sender.join();
  ASSERT_EQ(receiver.tags.size(), 2U);
  EXPECT_EQ(receiver.tags[0], Tag(5000000, 2));
  EXPECT_EQ(receiver.tags[1], Tag(7000000, 0));
  EXPECT_EQ(receiver.values, (std::vector<std::int64_t>{42, 43}));
  EXPECT_EQ(env.late_events(), 0U);
}

TEST(PhysicalAction, LateInjectedEventIsDeliveredAtTheNextMicrostepAndCounted) {
  class Clocked : public Reactor {
   public:
    Timer at_10ms{"at_10ms", this, milliseconds(10)};
    PhysicalAction<int> input{"input", this};
    std::atomic<bool> passed_10ms{false};
    std::vector<Tag> input_tags;
    Clocked(std::string name, Environment& env) : Reactor(std::move(name), env) {
      reaction("timer").triggers(at_10ms).body([this] { passed_10ms.store(true); });
      reaction("input").triggers(input).body([this] {
        input_tags.push_back(tag());
        request_stop();
      });
    }
  };
  EnvironmentConfig config;
  config.start_time_ns = 0;
  config.workers = 2;
  Environment env(config);
  auto& clocked = env.add<Clocked>("clocked");
  env.assemble();
  std::thread sender([&] {
    while (!clocked.passed_10ms.load()) std::this_thread::yield();
    EXPECT_TRUE(clocked.input.schedule_at(Tag(1000000, 0), 1));  // already in the past
  });
  env.run();
  sender.join();
  ASSERT_EQ(clocked.input_tags.size(), 1U);
  EXPECT_EQ(clocked.input_tags[0], Tag(10000000, 1));
  EXPECT_EQ(env.late_events(), 1U);
}

TEST(PhysicalAction, RealTimeModeNeverRunsATagBeforeItsPhysicalTime) {
  class Periodic : public Reactor {
   public:
    Timer tick{"tick", this, milliseconds(0), milliseconds(2)};
    std::vector<std::int64_t> lead_ns;  // physical time - tag time, at each reaction
    Periodic(std::string name, Environment& env) : Reactor(std::move(name), env) {
      reaction("tick").triggers(tick).body(
          [this] { lead_ns.push_back(physical_time_ns() - tag().time_ns()); });
    }
  };
  EnvironmentConfig config;
  config.fast = false;
  config.timeout = milliseconds(12);
  Environment env(config);
  auto& periodic = env.add<Periodic>("periodic");
  env.run();
  ASSERT_EQ(periodic.lead_ns.size(), 7U);
  for (std::int64_t lead : periodic.lead_ns) EXPECT_GE(lead, 0);
}

}  // namespace
}  // namespace tagflow::reactors
