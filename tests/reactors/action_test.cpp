// Logical actions and timers: delays, microsteps, same-tag replacement, offsets and periods.
#include "reactors/action.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "reactors/reactors.hpp"

namespace tagflow::reactors {
namespace {

using std::chrono::milliseconds;

EnvironmentConfig starting_at_zero() {
  EnvironmentConfig config;
  config.start_time_ns = 0;
  return config;
}

TEST(LogicalAction, ZeroDelayIsTheNextMicrostepAndMinDelayAddsToExtra) {
  class Actor : public Reactor {
   public:
    LogicalAction<int> now{"now", this};
    LogicalAction<int> delayed{"delayed", this, milliseconds(2)};
    std::vector<std::pair<Tag, int>> seen;
    Actor(std::string name, Environment& env) : Reactor(std::move(name), env) {
      reaction("start").triggers(startup()).effects(now, delayed).body([this] {
        now.schedule(1);
        delayed.schedule(2, milliseconds(3));
      });
      reaction("seen").triggers(now, delayed).body([this] {
        if (now.is_present()) seen.emplace_back(tag(), now.get());
        if (delayed.is_present()) seen.emplace_back(tag(), delayed.get());
      });
    }
  };
  Environment env(starting_at_zero());
  auto& actor = env.add<Actor>("actor");
  env.run();
  ASSERT_EQ(actor.seen.size(), 2U);
  EXPECT_EQ(actor.seen[0], std::make_pair(Tag(0, 1), 1));
  EXPECT_EQ(actor.seen[1], std::make_pair(Tag(5000000, 0), 2));
}

TEST(LogicalAction, LaterScheduleForTheSameTagWins) {
  class Actor : public Reactor {
   public:
    LogicalAction<int> action{"action", this, milliseconds(1)};
    std::vector<int> seen;
    Actor(std::string name, Environment& env) : Reactor(std::move(name), env) {
      reaction("start").triggers(startup()).effects(action).body([this] {
        action.schedule(1);
        action.schedule(2);
      });
      reaction("seen").triggers(action).body([this] { seen.push_back(action.get()); });
    }
  };
  Environment env(starting_at_zero());
  auto& actor = env.add<Actor>("actor");
  env.run();
  EXPECT_EQ(actor.seen, std::vector<int>{2});
}

TEST(Timer, FiresAtOffsetThenEveryPeriodAndOnceWithoutPeriod) {
  class Timed : public Reactor {
   public:
    Timer periodic{"periodic", this, milliseconds(3), milliseconds(4)};
    Timer once{"once", this, milliseconds(5)};
    std::vector<Tag> periodic_tags;
    std::vector<Tag> once_tags;
    Timed(std::string name, Environment& env) : Reactor(std::move(name), env) {
      reaction("periodic").triggers(periodic).body([this] { periodic_tags.push_back(tag()); });
      reaction("once").triggers(once).body([this] { once_tags.push_back(tag()); });
    }
  };
  EnvironmentConfig config = starting_at_zero();
  config.timeout = milliseconds(12);
  Environment env(config);
  auto& timed = env.add<Timed>("timed");
  env.run();
  EXPECT_EQ(timed.periodic_tags,
            (std::vector<Tag>{Tag(3000000, 0), Tag(7000000, 0), Tag(11000000, 0)}));
  EXPECT_EQ(timed.once_tags, (std::vector<Tag>{Tag(5000000, 0)}));
}

}  // namespace
}  // namespace tagflow::reactors
