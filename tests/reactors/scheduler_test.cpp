#include "reactors/scheduler.hpp"

#include <gtest/gtest.h>

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
  Environment env(EnvironmentConfig{GetParam(), true, {}, {}, {}});
  auto& ping = env.add<Ping>("ping", 1000);
  auto& pong = env.add<Pong>("pong");
  env.connect(ping.out, pong.in);
  env.connect(pong.out, ping.in);
  env.run();
  EXPECT_EQ(ping.received, 1000);
}

INSTANTIATE_TEST_SUITE_P(Workers, SchedulerModes, ::testing::Values(1U, 2U, 4U));

}  // namespace
}  // namespace tagflow::reactors
