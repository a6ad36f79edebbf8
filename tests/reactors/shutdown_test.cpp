// Stopping: timeout, request_stop, stop_at, running out of events; pending events are dropped
// and every shutdown reaction runs at the stop tag.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "reactors/reactors.hpp"

namespace tagflow::reactors {
namespace {

using std::chrono::milliseconds;

class Ticker : public Reactor {
 public:
  Timer tick{"tick", this, milliseconds(0), milliseconds(10)};
  LogicalAction<int> far{"far", this, milliseconds(500)};
  std::vector<Tag> ticks;
  std::vector<Tag> shutdowns;
  int far_fired = 0;
  int stop_after;
  Ticker(std::string name, Environment& env, int stop_after_ticks)
      : Reactor(std::move(name), env), stop_after(stop_after_ticks) {
    reaction("tick").triggers(tick).effects(far).body([this] {
      ticks.push_back(tag());
      far.schedule(1);  // always pending beyond the stop tag
      if (static_cast<int>(ticks.size()) == stop_after) request_stop();
    });
    reaction("far").triggers(far).body([this] { ++far_fired; });
    reaction("bye").triggers(shutdown()).body([this] { shutdowns.push_back(tag()); });
  }
};

EnvironmentConfig config_with(unsigned workers) {
  EnvironmentConfig config;
  config.start_time_ns = 0;
  config.workers = workers;
  return config;
}

TEST(Shutdown, TimeoutDropsPendingEventsAndRunsShutdownAtTheStopTag) {
  EnvironmentConfig config = config_with(2);
  config.timeout = milliseconds(45);
  Environment env(config);
  auto& ticker = env.add<Ticker>("ticker", -1);
  env.run();
  EXPECT_EQ(ticker.ticks.size(), 5U);  // 0, 10, 20, 30, 40 ms
  EXPECT_EQ(ticker.far_fired, 0);      // the first would be at 500 ms
  ASSERT_EQ(ticker.shutdowns.size(), 1U);
  EXPECT_EQ(ticker.shutdowns[0], Tag(45000000, 0));
}

TEST(Shutdown, TimerAtTheStopTagStillFires) {
  EnvironmentConfig config = config_with(1);
  config.timeout = milliseconds(40);
  Environment env(config);
  auto& ticker = env.add<Ticker>("ticker", -1);
  env.run();
  ASSERT_EQ(ticker.ticks.size(), 5U);
  EXPECT_EQ(ticker.ticks.back(), Tag(40000000, 0));
  EXPECT_EQ(ticker.shutdowns.at(0), Tag(40000000, 0));
}

TEST(Shutdown, RequestStopFromAReactionStopsAtTheNextMicrostep) {
  Environment env(config_with(4));
  auto& ticker = env.add<Ticker>("ticker", 3);
  env.run();
  EXPECT_EQ(ticker.ticks.size(), 3U);
  ASSERT_EQ(ticker.shutdowns.size(), 1U);
  EXPECT_EQ(ticker.shutdowns[0], Tag(20000000, 1));
  EXPECT_EQ(ticker.far_fired, 0);
}

TEST(Shutdown, StopAtATagStopsThere) {
  Environment env(config_with(2));
  auto& ticker = env.add<Ticker>("ticker", -1);
  env.stop_at(Tag(25000000, 3));
  env.run();
  EXPECT_EQ(ticker.ticks.size(), 3U);
  EXPECT_EQ(ticker.shutdowns.at(0), Tag(25000000, 3));
}

TEST(Shutdown, ProgramWithoutEventsStopsAtTheNextMicrostep) {
  class Once : public Reactor {
   public:
    std::vector<Tag> seen;
    Once(std::string name, Environment& env) : Reactor(std::move(name), env) {
      reaction("start").triggers(startup()).body([this] { seen.push_back(tag()); });
      reaction("end").triggers(shutdown()).body([this] { seen.push_back(tag()); });
    }
  };
  Environment env(config_with(1));
  auto& once = env.add<Once>("once");
  env.run();
  EXPECT_EQ(once.seen, (std::vector<Tag>{Tag(0, 0), Tag(0, 1)}));
}

TEST(Shutdown, RequestStopFromAnotherThreadEndsAKeepaliveProgram) {
  class Idle : public Reactor {
   public:
    PhysicalAction<int> input{"input", this};
    std::atomic<bool> started{false};
    bool shut_down = false;
    Idle(std::string name, Environment& env) : Reactor(std::move(name), env) {
      reaction("start").triggers(startup()).body([this] { started.store(true); });
      reaction("input").triggers(input).body([] {});
      reaction("end").triggers(shutdown()).body([this] { shut_down = true; });
    }
  };
  Environment env(config_with(2));
  auto& idle = env.add<Idle>("idle");
  std::thread stopper([&] {
    while (!idle.started.load()) std::this_thread::yield();
    env.request_stop();
  });
  env.run();  // keepalive (it has a physical action): only the stop request ends it
  stopper.join();
  EXPECT_TRUE(idle.shut_down);
  EXPECT_FALSE(idle.input.try_schedule(1)) << "a finished program refuses physical events";
}

}  // namespace
}  // namespace tagflow::reactors
