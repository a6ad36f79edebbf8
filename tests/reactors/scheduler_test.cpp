#include "reactors/scheduler.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "reactors/reactors.hpp"

namespace tagflow::reactors {
namespace {

using std::chrono::milliseconds;

// Ping sends on `serve`, Pong echoes, Ping schedules the next serve: one round trip per tag.
class Ping : public Reactor {
 public:
  Input<int> in{"in", this};
  Output<int> out{"out", this};
  LogicalAction<> serve{"serve", this};
  int received = 0;
  int limit;

  Ping(std::string name, Environment& env, int rounds)
      : Reactor(std::move(name), env), limit(rounds) {
    reaction("start").triggers(startup()).effects(serve).body([this] { serve.schedule(); });
    reaction("send").triggers(serve).effects(out).body([this] { out.set(received); });
    reaction("receive").triggers(in).effects(serve).body([this] {
      EXPECT_EQ(in.get(), received);
      if (++received < limit) {
        serve.schedule();
      } else {
        request_stop();
      }
    });
  }
};

class Pong : public Reactor {
 public:
  Input<int> in{"in", this};
  Output<int> out{"out", this};
  Pong(std::string name, Environment& env) : Reactor(std::move(name), env) {
    reaction("echo").triggers(in).effects(out).body([this] { out.set(in.get()); });
  }
};

class SchedulerModes : public ::testing::TestWithParam<unsigned> {};

TEST_P(SchedulerModes, PingPongRunsEveryRoundTrip) {
  EnvironmentConfig config;
  config.workers = GetParam();
  Environment env(config);
  auto& ping = env.add<Ping>("ping", 1000);
  auto& pong = env.add<Pong>("pong");
  env.connect(ping.out, pong.in);
  env.connect(pong.out, ping.in);
  env.run();
  EXPECT_EQ(ping.received, 1000);
}

// A wide three-stage pipeline: each tag, every producer sets a value, every mapper reads its
// producer's value at the same tag, and one reducer reads all mappers. A level that started
// before the previous one finished would read absent or stale values.
class Producer : public Reactor {
 public:
  Output<long> out{"out", this};
  LogicalAction<> next{"next", this};
  Producer(std::string name, Environment& env, std::size_t index, int tags)
      : Reactor(std::move(name), env, index), tags_(tags) {
    reaction("produce").triggers(startup(), next).effects(out, next).body([this] {
      out.set(static_cast<long>(bank_index()) * 1000 + round_);
      if (++round_ < tags_) next.schedule();
    });
  }

 private:
  int tags_;
  int round_ = 0;
};

class Mapper : public Reactor {
 public:
  Input<long> in{"in", this};
  Output<long> out{"out", this};
  long expected_round = 0;
  long errors = 0;
  Mapper(std::string name, Environment& env, std::size_t index)
      : Reactor(std::move(name), env, index) {
    reaction("map").triggers(in).effects(out).body([this] {
      if (in.get() != static_cast<long>(bank_index()) * 1000 + expected_round) ++errors;
      ++expected_round;
      out.set(in.get() * 2);
    });
  }
};

class Reducer : public Reactor {
 public:
  InputMultiport<long> in;
  long rounds = 0;
  long errors = 0;
  Reducer(std::string name, Environment& env, std::size_t width)
      : Reactor(std::move(name), env), in("in", this, width) {
    reaction("reduce").triggers(in).body([this] {
      long sum = 0;
      for (std::size_t i = 0; i < in.size(); ++i) {
        if (!in[i].is_present()) ++errors;
        sum += in[i].get();
      }
      const auto n = static_cast<long>(in.size());
      if (sum != 2 * (1000 * n * (n - 1) / 2 + n * rounds)) ++errors;
      ++rounds;
    });
  }
};

TEST_P(SchedulerModes, StressWideLevelsCompleteBeforeTheNextLevelStarts) {
  constexpr std::size_t kWidth = 24;
  constexpr int kTags = 3000;
  EnvironmentConfig config;
  config.workers = GetParam();
  Environment env(config);
  auto producers = env.add_bank<Producer>("producer", kWidth, kTags);
  auto mappers = env.add_bank<Mapper>("mapper", kWidth);
  auto& reducer = env.add<Reducer>("reducer", kWidth);
  env.connect_each(producers.ports(&Producer::out), mappers.ports(&Mapper::in));
  env.connect_each(mappers.ports(&Mapper::out), reducer.in);
  env.run();
  EXPECT_EQ(env.level_count(), 3U);
  EXPECT_EQ(reducer.rounds, kTags);
  EXPECT_EQ(reducer.errors, 0);
  for (Mapper* mapper : mappers) {
    EXPECT_EQ(mapper->errors, 0);
    EXPECT_EQ(mapper->expected_round, kTags);
  }
}

TEST_P(SchedulerModes, StressManyShortRunsStartAndStopWorkersCleanly) {
  for (int run = 0; run < 100; ++run) {
    EnvironmentConfig config;
    config.workers = GetParam();
    Environment env(config);
    auto& ping = env.add<Ping>("ping", 10);
    auto& pong = env.add<Pong>("pong");
    env.connect(ping.out, pong.in);
    env.connect(pong.out, ping.in);
    env.run();
    ASSERT_EQ(ping.received, 10) << "run " << run;
  }
}

// Ticks every millisecond and throws at the third tick; a sibling reaction counts the ticks.
class Faulty : public Reactor {
 public:
  Timer tick{"tick", this, milliseconds(0), milliseconds(1)};
  int ticks = 0;
  int sibling_ticks = 0;
  Faulty(std::string name, Environment& env) : Reactor(std::move(name), env) {
    reaction("check").triggers(tick).body([this] {
      if (++ticks == 3) throw std::invalid_argument("observation width 5, expected 4");
    });
    reaction("count").triggers(tick).body([this] { ++sibling_ticks; });
  }
};

// An exception out of a reaction used to reach std::terminate (it cannot cross a worker): the
// process died. The run now stops at the next tag and run() throws naming the reaction.
TEST_P(SchedulerModes, AReactionThatThrowsStopsTheRunAndRunThrowsNamingIt) {
  EnvironmentConfig config;
  config.workers = GetParam();
  config.fast = true;
  config.start_time_ns = 0;
  config.timeout = milliseconds(1000);
  Environment env(config);
  auto& faulty = env.add<Faulty>("replay");
  try {
    env.run();
    ADD_FAILURE() << "run() returned after a reaction threw";
  } catch (const ReactionError& e) {
    EXPECT_EQ(std::string(e.what()),
              "reaction 'replay.check' threw: observation width 5, expected 4");
  }
  EXPECT_EQ(faulty.ticks, 3);          // no tag after the failing one ran a reaction...
  EXPECT_EQ(faulty.sibling_ticks, 3);  // ...and the rest of its tag did
}

INSTANTIATE_TEST_SUITE_P(Workers, SchedulerModes, ::testing::Values(1U, 2U, 4U));

}  // namespace
}  // namespace tagflow::reactors
