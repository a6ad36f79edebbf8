// The same program on 1, 2 and 4 workers gives an identical trace of (tag, reaction, value).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "reactors/reactors.hpp"

namespace tagflow::reactors {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

struct Entry {
  Tag tag;
  std::string reaction;
  long value;
  bool operator==(const Entry& o) const {
    return tag == o.tag && reaction == o.reaction && value == o.value;
  }
};
using Trace = std::vector<Entry>;

// Each reactor records into its own trace (its reactions never run concurrently).
class Traced : public Reactor {
 public:
  using Reactor::Reactor;
  Trace trace;
  void record(const std::string& reaction, long value) {
    trace.push_back(Entry{tag(), name() + "." + reaction, value});
  }
};

class Source : public Traced {
 public:
  Timer tick{"tick", this, milliseconds(0), milliseconds(1)};
  Input<long> feedback{"feedback", this};
  Output<long> out{"out", this};
  Source(std::string name, Environment& env) : Traced(std::move(name), env) {
    reaction("emit").triggers(tick).effects(out).body([this] {
      state_ = (state_ * 31 + 7) % 1000003;
      out.set(state_ % 1000);
      record("emit", state_ % 1000);
    });
    reaction("absorb").triggers(feedback).body([this] {
      state_ += feedback.get();
      record("absorb", feedback.get());
    });
  }

 private:
  long state_ = 1;
};

class Stage : public Traced {
 public:
  Input<long> in{"in", this};
  Output<long> out{"out", this};
  LogicalAction<long> later{"later", this, microseconds(300)};
  Stage(std::string name, Environment& env, std::size_t index)
      : Traced(std::move(name), env, index) {
    reaction("work").triggers(in).effects(out, later).body([this] {
      acc_ = (acc_ * 3 + in.get() + static_cast<long>(bank_index())) % 1000003;
      out.set(acc_ % 997);
      later.schedule(acc_ % 13, microseconds(static_cast<long>(bank_index()) * 100));
      record("work", acc_ % 997);
    });
    reaction("late").triggers(later).effects(out).body([this] {
      out.set(later.get() + 10000);
      record("late", later.get());
    });
  }

 private:
  long acc_ = 0;
};

class Sink : public Traced {
 public:
  InputMultiport<long> in;
  Output<long> feedback{"feedback", this};
  Sink(std::string name, Environment& env, std::size_t width)
      : Traced(std::move(name), env), in("in", this, width) {
    reaction("gather").triggers(in).effects(feedback).body([this] {
      long sum = 0;
      for (std::size_t i = 0; i < in.size(); ++i) {
        if (in[i].is_present()) sum = (sum * 7 + in[i].get() + static_cast<long>(i)) % 1000003;
      }
      feedback.set(sum % 100);
      record("gather", sum);
    });
  }
};

Trace run_program(unsigned workers) {
  EnvironmentConfig config;
  config.workers = workers;
  config.timeout = milliseconds(40);
  config.start_time_ns = 0;
  Environment env(config);
  auto& source = env.add<Source>("source");
  auto stages = env.add_bank<Stage>("stage", 6);
  auto& sink = env.add<Sink>("sink", stages.size());
  env.connect_broadcast(source.out, stages.ports(&Stage::in));
  env.connect_each(stages.ports(&Stage::out), sink.in, microseconds(0));
  env.connect(sink.feedback, source.feedback, microseconds(500));
  env.run();
  Trace all = source.trace;
  for (Stage* stage : stages) all.insert(all.end(), stage->trace.begin(), stage->trace.end());
  all.insert(all.end(), sink.trace.begin(), sink.trace.end());
  std::stable_sort(all.begin(), all.end(), [](const Entry& a, const Entry& b) {
    return std::tie(a.tag, a.reaction) < std::tie(b.tag, b.reaction);
  });
  return all;
}

TEST(Determinism, SameTraceOnOneTwoAndFourWorkers) {
  const Trace one = run_program(1);
  ASSERT_GT(one.size(), 300U);
  for (unsigned workers : {2U, 4U, 4U}) {
    const Trace other = run_program(workers);
    ASSERT_EQ(other.size(), one.size()) << workers << " workers";
    for (std::size_t i = 0; i < one.size(); ++i) {
      ASSERT_EQ(other[i], one[i]) << "first difference at entry " << i << " with " << workers
                                  << " workers: " << other[i].reaction << " vs " << one[i].reaction;
    }
  }
}

TEST(Determinism, TraceCoversEveryKindOfEvent) {
  const Trace trace = run_program(2);
  auto count = [&](const std::string& suffix) {
    return std::count_if(trace.begin(), trace.end(), [&](const Entry& e) {
      return e.reaction.size() >= suffix.size() &&
             e.reaction.compare(e.reaction.size() - suffix.size(), suffix.size(), suffix) == 0;
    });
  };
  EXPECT_EQ(count(".emit"), 41);  // timer at 0, 1, ..., 40 ms (the stop tag included)
  EXPECT_GT(count(".late"), 0);
  EXPECT_GT(count(".absorb"), 0);
  EXPECT_GT(count(".gather"), 0);
}

}  // namespace
}  // namespace tagflow::reactors
