// The per-tag path allocates nothing: a run of 5000 tags makes exactly as many heap allocations
// as a run of 50 tags of the same program (all of them set-up: threads, level queues).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <new>

#include "reactors/reactors.hpp"

namespace {
std::atomic<long> allocations{0};
}  // namespace

// Counting replacements of the global allocation functions, for this test binary only. They pair
// malloc with free by design; GCC cannot see that once they are inlined into their callers.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t size) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t /*size*/) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace tagflow::reactors {
namespace {

using std::chrono::microseconds;

class Server : public Reactor {
 public:
  Output<Shared<std::vector<double>>> out{"out", this};
  InputMultiport<double> answers;
  LogicalAction<int> next{"next", this};
  Shared<std::vector<double>> payload = make_shared_value<std::vector<double>>(1024, 2.0);
  int rounds;
  int done = 0;
  Server(std::string name, Environment& env, std::size_t width, int n)
      : Reactor(std::move(name), env), answers("answers", this, width), rounds(n) {
    reaction("send").triggers(startup(), next).effects(out).body([this] { out.set(payload); });
    reaction("gather").triggers(answers).effects(next).body([this] {
      if (++done < rounds) next.schedule(done);
    });
  }
};

class Worker : public Reactor {
 public:
  Input<Shared<std::vector<double>>> in{"in", this};
  Output<double> out{"out", this};
  Worker(std::string name, Environment& env, std::size_t index)
      : Reactor(std::move(name), env, index) {
    reaction("answer").triggers(in).effects(out).body(
        [this] { out.set((*in.get())[bank_index()]); });
  }
};

long allocations_during_run(unsigned workers, int rounds) {
  EnvironmentConfig config;
  config.workers = workers;
  config.start_time_ns = 0;
  Environment env(config);
  auto& server = env.add<Server>("server", 8, rounds);
  auto bank = env.add_bank<Worker>("worker", 8);
  env.connect_broadcast(server.out, bank.ports(&Worker::in));
  env.connect_each(bank.ports(&Worker::out), server.answers, microseconds(0));
  env.assemble();
  const long before = allocations.load();
  env.run();
  const long used = allocations.load() - before;
  EXPECT_EQ(server.done, rounds);
  return used;
}

TEST(Allocation, RunLengthDoesNotChangeTheNumberOfAllocationsInSingleThreadMode) {
  const long short_run = allocations_during_run(1, 50);
  EXPECT_GT(short_run, 0) << "the counter sees the set-up allocations";
  EXPECT_EQ(allocations_during_run(1, 5000), short_run);
}

// With workers, how the threads interleave can move a few set-up allocations from run to run
// (seen once in a loaded suite: 16 against 13), so each length runs three times and the fewest are
// compared. An allocation per tag would add thousands to every run of 5,000 tags.
long fewest_allocations(unsigned workers, int rounds) {
  long fewest = allocations_during_run(workers, rounds);
  for (int i = 0; i < 2; ++i) fewest = std::min(fewest, allocations_during_run(workers, rounds));
  return fewest;
}

TEST(Allocation, RunLengthDoesNotChangeTheNumberOfAllocationsWithWorkers) {
  EXPECT_EQ(fewest_allocations(3, 5000), fewest_allocations(3, 50));
}

}  // namespace
}  // namespace tagflow::reactors
