#include "reactors/scheduler.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>

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
  config.share_threshold = Duration(0);  // share every wide level, however cheap: the stress
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

/// A fast run of at most one second with `workers` workers.
EnvironmentConfig one_second(unsigned workers) {
  EnvironmentConfig config;
  config.workers = workers;
  config.fast = true;
  config.start_time_ns = 0;
  config.timeout = milliseconds(1000);
  return config;
}

/// Runs `env`, which must fail: the ReactionError's message ("" when it did not fail).
std::string failure_of(Environment& env) {
  try {
    env.run();
  } catch (const ReactionError& e) {
    return e.what();
  }
  return "";
}

// An exception out of a reaction used to reach std::terminate (it cannot cross a worker): the
// process died. The run now stops at the next tag and run() throws naming the reaction.
TEST_P(SchedulerModes, AReactionThatThrowsStopsTheRunAndRunThrowsNamingIt) {
  Environment env(one_second(GetParam()));
  auto& faulty = env.add<Faulty>("replay");
  EXPECT_EQ(failure_of(env), "reaction 'replay.check' threw: observation width 5, expected 4");
  EXPECT_EQ(faulty.ticks, 3);          // no tag after the failing one ran a reaction...
  EXPECT_EQ(faulty.sibling_ticks, 3);  // ...and the rest of its tag did
}

// Sets `out` at every tick from a reaction that does not declare it as an effect.
class Undeclared : public Reactor {
 public:
  Timer tick{"tick", this, milliseconds(0), milliseconds(1)};
  Output<int> out{"out", this};
  Undeclared(std::string name, Environment& env) : Reactor(std::move(name), env) {
    reaction("emit").triggers(tick).body([this] { out.set(1); });
  }
};

class Tally : public Reactor {
 public:
  Input<int> in{"in", this};
  int seen = 0;
  Tally(std::string name, Environment& env) : Reactor(std::move(name), env) {
    reaction("count").triggers(in).body([this] { ++seen; });
  }
};

// The value of an output set without being declared used to vanish: the reactions it feeds are
// not ordered after the writer and may already have run. Now the run stops and names both.
TEST_P(SchedulerModes, SettingAnOutputNotDeclaredAsAnEffectStopsTheRunNamingReactionAndPort) {
  Environment env(one_second(GetParam()));
  auto& source = env.add<Undeclared>("source");
  auto& tally = env.add<Tally>("tally");
  env.connect(source.out, tally.in);
  const std::string what = failure_of(env);
  EXPECT_EQ(what.rfind("reaction 'source.emit' threw: reaction 'source.emit' set output "
                       "'source.out' without declaring it",
                       0),
            0U)
      << what;
  EXPECT_EQ(tally.seen, 0);
}

// A bank member whose reaction keeps a core busy for about `busy` and records the threads that
// ran it.
class Busy : public Reactor {
 public:
  Input<int> in{"in", this};
  std::set<std::thread::id> threads;
  Busy(std::string name, Environment& env, std::size_t index, Duration busy)
      : Reactor(std::move(name), env, index) {
    reaction("work").triggers(in).body([this, busy] {
      const auto until = std::chrono::steady_clock::now() + busy;
      while (std::chrono::steady_clock::now() < until) {
      }
      threads.insert(std::this_thread::get_id());
    });
  }
};

// A tag source that broadcasts one value per tag to a bank, `rounds` tags.
class Fanout : public Reactor {
 public:
  Output<int> out{"out", this};
  LogicalAction<> next{"next", this};
  Fanout(std::string name, Environment& env, int rounds) : Reactor(std::move(name), env) {
    reaction("send").triggers(startup(), next).effects(out, next).body([this, rounds] {
      out.set(sent);
      if (++sent < rounds) next.schedule();
    });
  }
  int sent = 0;
};

/// The distinct threads that ran the bank's reactions over `rounds` tags of `width` reactions.
std::size_t threads_used(unsigned workers, Duration busy, Duration threshold, int rounds) {
  EnvironmentConfig config;
  config.workers = workers;
  config.share_threshold = threshold;
  Environment env(config);
  auto& fanout = env.add<Fanout>("fanout", rounds);
  auto bank = env.add_bank<Busy>("busy", 4, busy);
  env.connect_broadcast(fanout.out, bank.ports(&Busy::in));
  env.run();
  EXPECT_EQ(fanout.sent, rounds);
  std::set<std::thread::id> all;
  for (Busy* member : bank) all.insert(member->threads.begin(), member->threads.end());
  return all.size();
}

TEST(SchedulerSharing, AWideLevelOfHeavyReactionsIsSpreadOverTheWorkers) {
  // 4 reactions of 200 µs per tag: 800 µs of work per level, far above the 20 µs threshold. The
  // first runs are timed inline; from then on the level is published and the second worker
  // claims reactions (over 100 tags it cannot miss them all, however loaded the machine).
  EXPECT_EQ(threads_used(2, std::chrono::microseconds(200), std::chrono::microseconds(20), 100),
            2U);
  EXPECT_EQ(threads_used(1, std::chrono::microseconds(200), std::chrono::microseconds(20), 20), 1U);
}

TEST(SchedulerSharing, AboveAnyMeasuredCostAThresholdKeepsEveryLevelOnOneWorker) {
  // Nothing is worth sharing under an hour's threshold: every reaction runs on the thread that
  // advances tags, as in single-thread mode.
  EXPECT_EQ(threads_used(2, std::chrono::microseconds(50), std::chrono::hours(1), 50), 1U);
}

INSTANTIATE_TEST_SUITE_P(Workers, SchedulerModes, ::testing::Values(1U, 2U, 4U));

}  // namespace
}  // namespace tagflow::reactors
