// The federation door: a tag-advance barrier released by grants from another thread, NET and
// LTC hooks, values injected at a tag, and stop requests routed to the federation.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "reactors/reactors.hpp"

namespace tagflow::reactors {
namespace {

using std::chrono::milliseconds;

constexpr std::int64_t kMs = 1000000;

class Federate : public Reactor {
 public:
  Timer tick{"tick", this, milliseconds(0), milliseconds(1)};
  PhysicalAction<int> network{"network", this};
  std::vector<Tag> ticks;
  std::vector<std::pair<Tag, int>> received;
  Federate(std::string name, Environment& env) : Reactor(std::move(name), env) {
    reaction("tick").triggers(tick).body([this] { ticks.push_back(tag()); });
    reaction("receive").triggers(network).body(
        [this] { received.emplace_back(tag(), network.get()); });
  }
};

// What the hooks saw, readable from the test thread.
struct Observed {
  std::atomic<std::int64_t> net_time{-1};
  std::atomic<std::int64_t> completed_time{-1};
  std::atomic<int> completed_count{0};
};

FederationHooks observing(Observed& observed) {
  FederationHooks hooks;
  hooks.next_event_tag = [&observed](Tag next) {
    observed.net_time.store(next.is_forever() ? -2 : next.time_ns());
  };
  hooks.tag_complete = [&observed](Tag done) {
    observed.completed_time.store(done.time_ns());
    observed.completed_count.fetch_add(1);
  };
  return hooks;
}

void wait_until(const std::atomic<std::int64_t>& value, std::int64_t expected) {
  while (value.load() != expected) std::this_thread::yield();
}

class FederationWorkers : public ::testing::TestWithParam<unsigned> {};

TEST_P(FederationWorkers, BarrierHoldsTagsAboveTheGrantUntilAnotherThreadGrants) {
  EnvironmentConfig config;
  config.workers = GetParam();
  config.start_time_ns = 0;
  config.timeout = milliseconds(5);
  Environment env(config);
  auto& federate = env.add<Federate>("federate");
  Observed observed;
  env.enable_tag_barrier();
  env.set_federation_hooks(observing(observed));
  std::thread coordinator([&] {
    for (std::int64_t t = 0; t <= 5; ++t) {
      wait_until(observed.net_time, t * kMs);  // NET(t): it wants t and is held there
      EXPECT_EQ(observed.completed_time.load(), t == 0 ? -1 : (t - 1) * kMs)
          << "a tag above the grant was processed";
      env.grant(Tag(t * kMs, 0));                    // TAG(t)
      wait_until(observed.completed_time, t * kMs);  // LTC(t)
    }
  });
  env.run();
  coordinator.join();
  EXPECT_EQ(federate.ticks.size(), 6U);
  EXPECT_EQ(observed.completed_count.load(), 6);
}

TEST_P(FederationWorkers, InjectedValueBelowTheGrantIsProcessedAtItsTag) {
  EnvironmentConfig config;
  config.workers = GetParam();
  config.start_time_ns = 0;
  config.timeout = milliseconds(3);
  Environment env(config);
  auto& federate = env.add<Federate>("federate");
  Observed observed;
  env.enable_tag_barrier(Tag(1 * kMs, 0));
  env.set_federation_hooks(observing(observed));
  std::thread network([&] {
    wait_until(observed.net_time, 2 * kMs);  // held at 2 ms by the grant
    // A message at (1 ms, 5): below the held tag, above the last completed one.
    EXPECT_TRUE(federate.network.schedule_at(Tag(1 * kMs, 5), 99));
    wait_until(observed.completed_time, 1 * kMs);
    env.grant(Tag(3 * kMs, 0).predecessor());  // PTAG(3 ms): everything below 3 ms
    wait_until(observed.net_time, 3 * kMs);
    EXPECT_EQ(observed.completed_time.load(), 2 * kMs);
    env.grant(Tag(3 * kMs, 0));
  });
  env.run();
  network.join();
  ASSERT_EQ(federate.received.size(), 1U);
  EXPECT_EQ(federate.received[0], std::make_pair(Tag(1 * kMs, 5), 99));
  EXPECT_EQ(federate.ticks.size(), 4U);
  EXPECT_EQ(env.late_events(), 0U);
}

TEST_P(FederationWorkers, ValueScheduledJustBeforeItsGrantIsNeverLate) {
  // The network thread schedules the value of tag t and grants t as soon as t - 1 completes,
  // i.e. while the scheduler may be between collecting physical events and checking the grant.
  constexpr int kTags = 3000;
  EnvironmentConfig config;
  config.workers = GetParam();
  config.start_time_ns = 0;
  config.timeout = milliseconds(kTags + 1);
  Environment env(config);
  auto& federate = env.add<Federate>("federate");
  Observed observed;
  env.enable_tag_barrier(Tag(0, 0));
  env.set_federation_hooks(observing(observed));
  std::thread network([&] {
    for (int t = 1; t <= kTags; ++t) {
      wait_until(observed.completed_time, (t - 1) * kMs);
      EXPECT_TRUE(federate.network.schedule_at(Tag(t * kMs, 0), t));
      env.grant(Tag(t * kMs, 0));
    }
    wait_until(observed.completed_time, kTags * kMs);
    env.grant(Tag::forever());
  });
  env.run();
  network.join();
  EXPECT_EQ(env.late_events(), 0U);
  ASSERT_EQ(federate.received.size(), static_cast<std::size_t>(kTags));
  for (int t = 1; t <= kTags; ++t) {
    EXPECT_EQ(federate.received[t - 1], std::make_pair(Tag(t * kMs, 0), t)) << "tag " << t;
    if (federate.received[t - 1].first != Tag(t * kMs, 0)) break;
  }
}

TEST_P(FederationWorkers, GrantGivenBetweenAssemblyAndRunIsKept) {
  EnvironmentConfig config;
  config.workers = GetParam();
  config.start_time_ns = 0;
  config.timeout = milliseconds(3);
  Environment env(config);
  auto& federate = env.add<Federate>("federate");
  env.enable_tag_barrier();
  env.assemble();
  env.grant(Tag::forever());  // before run(): nobody else will ever grant
  env.run();
  EXPECT_EQ(federate.ticks.size(), 4U);
}

TEST_P(FederationWorkers, LocalStopRequestEndsTheRunWithoutAGrant) {
  EnvironmentConfig config;
  config.workers = GetParam();
  config.start_time_ns = 0;
  Environment env(config);
  auto& federate = env.add<Federate>("federate");
  Observed observed;
  env.enable_tag_barrier(Tag(2 * kMs, 0));
  env.set_federation_hooks(observing(observed));
  std::thread stopper([&] {
    wait_until(observed.net_time, 3 * kMs);  // held at 3 ms: no grant will come
    env.request_stop();
  });
  env.run();
  stopper.join();
  EXPECT_EQ(federate.ticks.size(), 3U);  // 0, 1 and 2 ms; the stop tag (2 ms, 1) has no tick
  EXPECT_EQ(observed.completed_time.load(), 2 * kMs);
}

TEST_P(FederationWorkers, StopWithoutGrantEndsARunWhoseStopIsUpToTheFederation) {
  EnvironmentConfig config;
  config.workers = GetParam();
  config.start_time_ns = 0;
  Environment env(config);
  auto& federate = env.add<Federate>("federate");
  Observed observed;
  FederationHooks hooks = observing(observed);
  std::atomic<int> proposals{0};
  hooks.stop_requested = [&proposals](Tag) { proposals.fetch_add(1); };
  env.enable_tag_barrier(Tag(1 * kMs, 0));
  env.set_federation_hooks(hooks);
  std::thread stopper([&] {
    wait_until(observed.net_time, 2 * kMs);
    env.stop_without_grant();  // the federation failed: leave now
  });
  env.run();
  stopper.join();
  EXPECT_EQ(proposals.load(), 0);
  EXPECT_EQ(federate.ticks.size(), 2U);
}

INSTANTIATE_TEST_SUITE_P(Workers, FederationWorkers, ::testing::Values(1U, 2U));

TEST(Federation, StopRequestIsProposedToTheFederationWhichDecidesTheStopTag) {
  class Stopper : public Reactor {
   public:
    Timer tick{"tick", this, milliseconds(0), milliseconds(1)};
    std::vector<Tag> ticks;
    Tag shutdown_tag;
    Stopper(std::string name, Environment& env) : Reactor(std::move(name), env) {
      reaction("tick").triggers(tick).body([this] {
        ticks.push_back(tag());
        if (ticks.size() == 2) request_stop();
      });
      reaction("end").triggers(shutdown()).body([this] { shutdown_tag = tag(); });
    }
  };
  EnvironmentConfig config;
  config.start_time_ns = 0;
  Environment env(config);
  auto& stopper = env.add<Stopper>("stopper");
  std::vector<Tag> proposed;
  FederationHooks hooks;
  hooks.stop_requested = [&](Tag tag) {
    proposed.push_back(tag);
    env.stop_at(Tag(3 * kMs, 0));  // the coordinator grants a later stop tag
  };
  env.set_federation_hooks(hooks);
  env.run();
  ASSERT_EQ(proposed.size(), 1U);
  EXPECT_EQ(proposed[0], Tag(1 * kMs, 1));
  EXPECT_EQ(stopper.shutdown_tag, Tag(3 * kMs, 0));
  EXPECT_EQ(stopper.ticks.size(), 4U);
}

TEST(Federation, AProposedStopHoldsEveryTagFromTheProposalOnUntilTheFederationDecides) {
  class Stopper : public Reactor {
   public:
    Timer tick{"tick", this, milliseconds(0), milliseconds(1)};
    std::atomic<int> ticks{0};
    Tag shutdown_tag;
    Stopper(std::string name, Environment& env) : Reactor(std::move(name), env) {
      reaction("tick").triggers(tick).body([this] {
        if (ticks.fetch_add(1) + 1 == 2) request_stop();  // at 1 ms: proposes (1 ms, 1)
      });
      reaction("end").triggers(shutdown()).body([this] { shutdown_tag = tag(); });
    }
  };
  EnvironmentConfig config;
  config.start_time_ns = 0;
  config.workers = 2;
  Environment env(config);
  auto& stopper = env.add<Stopper>("stopper");
  std::atomic<std::int64_t> proposed{-1};
  FederationHooks hooks;
  hooks.stop_requested = [&](Tag tag) { proposed.store(tag.time_ns() * 10 + tag.microstep()); };
  env.enable_tag_barrier(Tag::forever());  // granted: only the hold can keep it at (1 ms, 1)
  env.set_federation_hooks(hooks);
  std::thread federation([&] {
    wait_until(proposed, 1 * kMs * 10 + 1);
    std::this_thread::sleep_for(milliseconds(20));  // room to run ahead, if it could
    EXPECT_EQ(stopper.ticks.load(), 2) << "a tag past the proposed stop ran before the decision";
    env.stop_at(Tag(4 * kMs, 0));  // the decided stop tag is later than the proposal
  });
  env.run();
  federation.join();
  EXPECT_EQ(stopper.ticks.load(), 5);  // 0..4 ms
  EXPECT_EQ(stopper.shutdown_tag, Tag(4 * kMs, 0));
}

TEST(Federation, EveryProcessedTagIsAnnouncedThenCompletedInOrder) {
  EnvironmentConfig config;
  config.start_time_ns = 0;
  config.timeout = milliseconds(3);
  config.workers = 2;
  Environment env(config);
  env.add<Federate>("federate");
  std::vector<Tag> nets;
  std::vector<Tag> ltcs;
  FederationHooks hooks;
  hooks.next_event_tag = [&](Tag tag) { nets.push_back(tag); };
  hooks.tag_complete = [&](Tag tag) { ltcs.push_back(tag); };
  env.set_federation_hooks(hooks);
  env.run();
  const std::vector<Tag> expected{Tag(0, 0), Tag(1 * kMs, 0), Tag(2 * kMs, 0), Tag(3 * kMs, 0)};
  EXPECT_EQ(nets, expected);
  EXPECT_EQ(ltcs, expected);
}

// federation.hpp step 8: the wait hook stands in for the parker.
struct WaitOnOwnThread {
  std::thread::id runner = std::this_thread::get_id();
  std::mutex mutex;
  std::condition_variable cv;
  bool woken = false;
  int waits = 0;                     // run thread only
  int polls = 0;                     // run thread only
  bool every_hook_on_runner = true;  // run thread only
  std::atomic<int> wakes{0};
  std::atomic<int> wakes_from_runner{0};

  FederationHooks hooks(Environment& env, Observed& observed, int self_granted) {
    FederationHooks hooks = observing(observed);
    hooks.wait = [this, &env, &observed, self_granted](std::int64_t timeout_ns) {
      every_hook_on_runner = every_hook_on_runner && std::this_thread::get_id() == runner;
      ++waits;
      const std::int64_t wanted = observed.net_time.load();
      if (wanted >= 0 && wanted < self_granted * kMs) {
        env.grant(Tag(wanted, 0));  // what a received TAG does in the federate's wait
        return;
      }
      std::unique_lock<std::mutex> lock(mutex);
      const auto limit = timeout_ns < 0 ? std::chrono::nanoseconds(std::chrono::seconds(5))
                                        : std::chrono::nanoseconds(timeout_ns);
      cv.wait_for(lock, limit, [this] { return woken; });
      woken = false;
    };
    hooks.poll = [this] {
      every_hook_on_runner = every_hook_on_runner && std::this_thread::get_id() == runner;
      ++polls;
    };
    hooks.wake = [this] {
      if (std::this_thread::get_id() == runner) wakes_from_runner.fetch_add(1);
      wakes.fetch_add(1);
      const std::lock_guard<std::mutex> lock(mutex);
      woken = true;
      cv.notify_all();
    };
    return hooks;
  }
};

/// Runs the ticking federate to `last_ms` on `workers` workers with `own`'s hooks: the wait
/// grants tags below `self_granted` ms itself, another thread grants the rest, each once it
/// was announced and only after the tag before it completed. Returns the ticks.
std::size_t run_with_wait_hook(WaitOnOwnThread& own, unsigned workers, int last_ms,
                               int self_granted) {
  EnvironmentConfig config;
  config.workers = workers;
  config.start_time_ns = 0;
  config.timeout = milliseconds(last_ms);
  Environment env(config);
  auto& federate = env.add<Federate>("federate");
  Observed observed;
  env.enable_tag_barrier();
  env.set_federation_hooks(own.hooks(env, observed, self_granted));
  std::thread coordinator([&] {
    for (std::int64_t t = self_granted; t <= last_ms; ++t) {
      wait_until(observed.net_time, t * kMs);
      EXPECT_EQ(observed.completed_time.load(), t == 0 ? -1 : (t - 1) * kMs)
          << "a tag above the grant was processed";
      env.grant(Tag(t * kMs, 0));
      wait_until(observed.completed_time, t * kMs);
    }
  });
  env.run();
  coordinator.join();
  return federate.ticks.size();
}

TEST(Federation, WithAWaitHookTheRunThreadWaitsInItAndAnotherThreadsGrantWakesIt) {
  WaitOnOwnThread own;
  // Tags 0 and 1 ms are granted inside the wait; 2 .. 5 ms by another thread.
  EXPECT_EQ(run_with_wait_hook(own, 1, 5, 2), 6U);
  EXPECT_TRUE(own.every_hook_on_runner);
  EXPECT_GE(own.waits, 6);         // one per tag at least: each was above the grant when announced
  EXPECT_GE(own.polls, 6);         // one per tag advance
  EXPECT_GE(own.wakes.load(), 4);  // the other thread's four grants
  EXPECT_EQ(own.wakes_from_runner.load(), 0);  // the wait's own grants need no wake-up
}

// The wait hook is the run thread's only way to sleep: with several workers it would never be
// called, and without poll or wake the run would miss sends or wake-ups; both are refused.
TEST(Federation, TheWaitHooksComeAllThreeAndOnlyWithOneWorker) {
  WaitOnOwnThread own;
  Observed observed;
  {
    EnvironmentConfig config;
    config.workers = 2;
    Environment env(config);
    try {
      env.set_federation_hooks(own.hooks(env, observed, 0));
      FAIL() << "wait hooks with two workers";
    } catch (const std::invalid_argument& e) {
      EXPECT_STREQ(e.what(),
                   "federation hooks: wait, poll and wake need one worker (this environment has "
                   "2)");
    }
  }
  Environment env;
  FederationHooks partial = own.hooks(env, observed, 0);
  partial.wake = nullptr;
  try {
    env.set_federation_hooks(partial);
    FAIL() << "wait and poll without wake";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(),
                 "federation hooks: wait, poll and wake are set all three or none (2 of them set)");
  }
  env.set_federation_hooks(observing(observed));  // none of the three: the parker waits
}

}  // namespace
}  // namespace tagflow::reactors
