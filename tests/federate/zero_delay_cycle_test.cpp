// Zero-delay cycles across federates (PROTOCOL.md §3.7, PTAG and ABSENT): the same program split
// over 2 and over 3 federates (threads of this process, each with its own sockets over TCP) gives
// the traces and digest of one Environment, run after run with random sleeps in the reactions.
// Some tags write nothing on a cycle connection, so ABSENT decides them; in the 3-federate cycle
// some tags are entered by a federate other than the head of the cycle.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <iostream>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include <gtest/gtest.h>

#include "coordinator/coordinator.hpp"
#include "federate/reactor_federate.hpp"
#include "payload_text.hpp"
#include "pipeline_program.hpp"
#include "reactors/timer.hpp"

namespace tagflow::coordinator {
namespace {

using namespace std::chrono_literals;
using testing::payload;
using testing::text;

/// Sleeps a random time below `max_us` (different in every run): reactions finish late and in
/// varying order, which the results must not depend on.
void random_sleep(int max_us) {
  if (max_us <= 0) return;
  thread_local std::mt19937 rng(std::random_device{}());
  std::this_thread::sleep_for(std::chrono::microseconds(rng() % max_us));
}

std::string stamp(const reactors::Tag& tag) {
  return std::to_string(tag.time_ns()) + "." + std::to_string(tag.microstep());
}

/// The head of the cycle: a tick every millisecond sends "a<n>" except at every 4th tick (so the
/// connection is absent there); logs what comes back around the cycle and on a side input.
class Head : public reactors::Reactor {
 public:
  reactors::Timer tick{"tick", this, 0ms, 1ms};
  reactors::Output<transport::Payload> out{"out", this};
  reactors::Input<transport::Payload> back{"back", this};
  reactors::Input<transport::Payload> side{"side", this};
  std::string trace;
  Head(std::string name, reactors::Environment& env, int sleep_us) : Reactor(std::move(name), env) {
    reaction("emit").triggers(tick).effects(out).body([this, sleep_us] {
      random_sleep(sleep_us);
      if (n_ % 4 != 3) out.set(payload("a" + std::to_string(n_)));
      ++n_;
    });
    reaction("log").triggers(back, side).body([this, sleep_us] {
      random_sleep(sleep_us);
      trace += stamp(tag()) + " back=" + (back.is_present() ? text(back.get()) : "-") +
               " side=" + (side.is_present() ? text(side.get()) : "-") + "\n";
    });
  }

 private:
  int n_ = 0;
};

/// A member of the cycle: forwards what arrives with its name appended, except values whose
/// character sum is a multiple of 3 (absent downstream); logs what it saw.
class Relay : public reactors::Reactor {
 public:
  reactors::Input<transport::Payload> in{"in", this};
  reactors::Output<transport::Payload> out{"out", this};
  std::string trace;
  Relay(std::string name, reactors::Environment& env, int sleep_us)
      : Reactor(std::move(name), env) {
    reaction("relay").triggers(in).effects(out).body([this, sleep_us] {
      random_sleep(sleep_us);
      const std::string value = text(in.get());
      trace += stamp(tag()) + " " + value + "\n";
      int sum = 0;
      for (const char ch : value) sum += ch;
      if (sum % 3 != 0) out.set(payload(value + this->name()));
    });
  }
};

/// A clock of its own inside a cycle member: ticks at 0.5 ms + k * 1.5 ms, tags the head has no
/// event at, so the cycle also runs tags that another federate enters.
class SideClock : public reactors::Reactor {
 public:
  reactors::Timer tick{"tick", this, 500us, 1500us};
  reactors::Output<transport::Payload> out{"out", this};
  SideClock(std::string name, reactors::Environment& env) : Reactor(std::move(name), env) {
    reaction("tick").triggers(tick).effects(out).body(
        [this] { out.set(payload("c" + std::to_string(k_++))); });
  }

 private:
  int k_ = 0;
};

reactors::EnvironmentConfig config(unsigned workers) {
  reactors::EnvironmentConfig config;
  config.workers = workers;
  config.start_time_ns = 0;
  config.timeout = 40ms;
  return config;
}

/// a -> b -> a, or a -> b -> c -> a with c's clock into a's side input; traces by reactor.
std::map<std::string, std::string> run_in_one_environment(bool three) {
  reactors::Environment env(config(2));
  auto& a = env.add<Head>("a", 0);
  auto& b = env.add<Relay>("b", 0);
  env.connect(a.out, b.in);
  std::map<std::string, std::string> traces;
  if (!three) {
    env.connect(b.out, a.back);
    env.run();
    return {{"a", a.trace}, {"b", b.trace}};
  }
  auto& c = env.add<Relay>("c", 0);
  auto& clock = env.add<SideClock>("clock");
  env.connect(b.out, c.in);
  env.connect(c.out, a.back);
  env.connect(clock.out, a.side);
  env.run();
  return {{"a", a.trace}, {"b", b.trace}, {"c", c.trace}};
}

/// The federation: a <-> b, or the ring a -> b -> c -> a; every link without delay.
std::string cycle_spec(bool three) {
  std::string text =
      "federation:\n  coordinator: tcp://127.0.0.1:*\n  heartbeat_timeout: 10s\n"
      "  join_timeout: 20s\n  federates:\n";
  if (three) {
    text += "    a: {upstreams: [c], downstreams: [b]}\n";
    text += "    b: {upstreams: [a], downstreams: [c]}\n";
    text += "    c: {upstreams: [b], downstreams: [a]}\n";
  } else {
    text += "    a: {upstreams: [b], downstreams: [b]}\n";
    text += "    b: {upstreams: [a], downstreams: [a]}\n";
  }
  return text;
}

struct Outcome {
  std::string trace;
  std::uint64_t late_events = 0;
  std::uint64_t drops = 0;
};

/// Declares federate `id`'s part of the program, runs it, returns its trace.
Outcome run_federate(const FederationSpec& spec, const std::string& id, bool three, int sleep_us) {
  ReactorFederate federate(spec, id);
  federate.join();
  const std::string up = id == "a" ? (three ? "c" : "b") : id == "b" ? "a" : "b";
  const std::string down = id == "a" ? "b" : id == "b" ? (three ? "c" : "a") : "a";
  // Different worker counts on different federates: the results must not depend on them.
  reactors::Environment env(config(id == "b" ? 1 : 2));
  auto& from = env.add<NetworkReceiver>("from_" + up, federate, up, 1);
  auto& to = env.add<NetworkSender>("to_" + down, federate, down, 1);
  Outcome outcome;
  if (id == "a") {
    auto& a = env.add<Head>("a", sleep_us);
    env.connect(a.out, to.in);
    env.connect(from.out, a.back);
    if (three) {
      auto& side = env.add<NetworkReceiver>("side_from_c", federate, "c", 2);
      env.connect(side.out, a.side);
    }
    federate.run(env);
    outcome.trace = a.trace;
  } else {
    auto& relay = env.add<Relay>(id, sleep_us);
    env.connect(from.out, relay.in);
    env.connect(relay.out, to.in);
    if (id == "c") {
      auto& clock = env.add<SideClock>("clock");
      auto& side = env.add<NetworkSender>("side_to_a", federate, "a", 2);
      env.connect(clock.out, side.in);
    }
    federate.run(env);
    outcome.trace = relay.trace;
  }
  outcome.late_events = env.late_events();
  outcome.drops = federate.drops().total();
  return outcome;
}

/// Ends the test binary if a federated run hangs, so that a deadlock fails loudly and quickly.
class Watchdog {
 public:
  explicit Watchdog(std::chrono::seconds limit)
      : thread_([this, limit] {
          std::unique_lock<std::mutex> lock(mutex_);
          if (!done_cv_.wait_for(lock, limit, [this] { return done_; })) {
            std::cerr << "zero-delay cycle run did not finish within " << limit.count() << " s\n";
            std::abort();
          }
        }) {}
  ~Watchdog() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    done_cv_.notify_all();
    thread_.join();
  }

 private:
  std::mutex mutex_;
  std::condition_variable done_cv_;
  bool done_ = false;
  std::thread thread_;
};

std::map<std::string, Outcome> run_federated(bool three, int sleep_us) {
  FederationSpec spec = parse_federation_spec(cycle_spec(three));
  Coordinator coordinator(spec);
  spec.address = coordinator.bind("tcp://127.0.0.1:*");
  CoordinatorResult result;
  const Watchdog watchdog(60s);
  std::thread loop([&] { result = coordinator.run(); });
  std::map<std::string, Outcome> outcomes;
  std::mutex mutex;
  std::vector<std::thread> threads;
  for (const std::string id : {"a", "b", "c"}) {
    if (id == "c" && !three) continue;
    threads.emplace_back([&, id] {
      try {
        Outcome outcome = run_federate(spec, id, three, sleep_us);
        const std::lock_guard<std::mutex> lock(mutex);
        outcomes[id] = std::move(outcome);
      } catch (const std::exception& e) {
        ADD_FAILURE() << id << ": " << e.what();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  loop.join();
  EXPECT_TRUE(result.ok) << result.error;
  return outcomes;
}

void expect_same_as_one_environment(bool three) {
  const std::map<std::string, std::string> expected = run_in_one_environment(three);
  for (int run = 0; run < 4; ++run) {
    // Run 0 without sleeps; the others with up to 300 us per reaction.
    const std::map<std::string, Outcome> outcomes = run_federated(three, run == 0 ? 0 : 300);
    ASSERT_EQ(outcomes.size(), expected.size()) << "run " << run;
    std::map<std::string, std::string> traces;
    for (const auto& [id, outcome] : outcomes) {
      traces[id] = outcome.trace;
      EXPECT_EQ(outcome.trace, expected.at(id)) << "federate " << id << ", run " << run;
      EXPECT_EQ(outcome.late_events, 0U) << id << ", run " << run;
      EXPECT_EQ(outcome.drops, 0U) << id << ", run " << run;
    }
    EXPECT_EQ(testing::digest(traces), testing::digest(expected)) << "run " << run;
  }
}

std::size_t lines(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

TEST(ZeroDelayCycle, AnInputThatCannotWaitInsideATagIsRefusedOnTheCycle) {
  const FederationSpec spec = parse_federation_spec(cycle_spec(false));
  ReactorFederate federate(spec, "a");
  reactors::Environment env(config(1));
  auto& relay = env.add<Relay>("relay", 0);
  reactors::PhysicalAction<transport::Payload> received("received", &relay);
  try {
    federate.bind_input("b", 1, received);
    FAIL() << "bind_input() accepted an input on a zero-delay cycle";
  } catch (const FederationConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("NetworkReceiver"), std::string::npos) << e.what();
  }
}

TEST(ZeroDelayCycle, OneEnvironmentReferenceHasValuesAndAbsencesOnTheCycle) {
  // 41 ticks (0..40 ms); every 4th writes nothing, so b sees 31 values.
  const std::map<std::string, std::string> two = run_in_one_environment(false);
  EXPECT_EQ(lines(two.at("b")), 31U) << two.at("b");
  EXPECT_EQ(two.at("b").find("\n3000000.0 "), std::string::npos) << two.at("b");
  // Some come back to a at the same tag, some are absent there.
  EXPECT_NE(two.at("a").find(" back=a0b "), std::string::npos) << two.at("a");
  EXPECT_GT(lines(two.at("a")), 5U);
  EXPECT_LT(lines(two.at("a")), lines(two.at("b")));
  const std::map<std::string, std::string> three = run_in_one_environment(true);
  EXPECT_NE(three.at("a").find("500000.0 back=- side=c0\n"), std::string::npos) << three.at("a");
  EXPECT_NE(three.at("a").find("bc side="), std::string::npos) << three.at("a");
  EXPECT_LT(lines(three.at("c")), lines(three.at("b")));
}

TEST(ZeroDelayCycle, TwoFederatesGiveTheTracesAndDigestOfOneEnvironment) {
  expect_same_as_one_environment(false);
}

TEST(ZeroDelayCycle, ThreeFederatesGiveTheTracesAndDigestOfOneEnvironment) {
  expect_same_as_one_environment(true);
}

}  // namespace
}  // namespace tagflow::coordinator
