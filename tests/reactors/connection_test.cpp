// Connections: direct (same tag), `after 0` (next microstep), `after d` (t + d, microstep 0).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "reactors/reactors.hpp"

namespace tagflow::reactors {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;

class Emitter : public Reactor {
 public:
  Output<int> out{"out", this};
  std::vector<int> values;  // sent in order, one per startup/next microstep
  LogicalAction<> next{"next", this};
  Emitter(std::string name, Environment& env, std::vector<int> to_send)
      : Reactor(std::move(name), env), values(std::move(to_send)) {
    reaction("emit").triggers(startup(), next).effects(out, next).body([this] {
      out.set(values[sent_]);
      if (++sent_ < values.size()) next.schedule();
    });
  }

 private:
  std::size_t sent_ = 0;
};

class Recorder : public Reactor {
 public:
  Input<int> in{"in", this};
  std::vector<std::pair<Tag, int>> seen;
  Recorder(std::string name, Environment& env) : Reactor(std::move(name), env) {
    reaction("record").triggers(in).body([this] { seen.emplace_back(tag(), in.get()); });
  }
};

EnvironmentConfig at_zero() {
  EnvironmentConfig config;
  config.start_time_ns = 0;
  return config;
}

TEST(Connection, DirectConnectionDeliversAtTheSameTag) {
  Environment env(at_zero());
  auto& emitter = env.add<Emitter>("emitter", std::vector<int>{4, 5});
  auto& recorder = env.add<Recorder>("recorder");
  env.connect(emitter.out, recorder.in);
  env.run();
  ASSERT_EQ(recorder.seen.size(), 2U);
  EXPECT_EQ(recorder.seen[0], std::make_pair(Tag(0, 0), 4));
  EXPECT_EQ(recorder.seen[1], std::make_pair(Tag(0, 1), 5));
}

TEST(Connection, AfterZeroDeliversAtTheNextMicrostep) {
  Environment env(at_zero());
  auto& emitter = env.add<Emitter>("emitter", std::vector<int>{1, 2, 3});
  auto& recorder = env.add<Recorder>("recorder");
  env.connect(emitter.out, recorder.in, nanoseconds(0));
  env.run();
  ASSERT_EQ(recorder.seen.size(), 3U);
  EXPECT_EQ(recorder.seen[0], std::make_pair(Tag(0, 1), 1));
  EXPECT_EQ(recorder.seen[1], std::make_pair(Tag(0, 2), 2));
  EXPECT_EQ(recorder.seen[2], std::make_pair(Tag(0, 3), 3));
}

TEST(Connection, AfterDelayDeliversAtLaterTimeAndMicrostepZero) {
  Environment env(at_zero());
  auto& emitter = env.add<Emitter>("emitter", std::vector<int>{7, 8});
  auto& recorder = env.add<Recorder>("recorder");
  env.connect(emitter.out, recorder.in, milliseconds(5));
  env.run();
  // (0,0) + 5 ms = (5 ms, 0); (0,1) + 5 ms = (5 ms, 0) too: the later value wins at that tag.
  ASSERT_EQ(recorder.seen.size(), 1U);
  EXPECT_EQ(recorder.seen[0], std::make_pair(Tag(5000000, 0), 8));
}

TEST(Connection, ChainedDelaysAddUp) {
  class Relay : public Reactor {
   public:
    Input<int> in{"in", this};
    Output<int> out{"out", this};
    Relay(std::string name, Environment& env) : Reactor(std::move(name), env) {
      reaction("relay").triggers(in).effects(out).body([this] { out.set(in.get() + 1); });
    }
  };
  Environment env(at_zero());
  auto& emitter = env.add<Emitter>("emitter", std::vector<int>{10});
  auto& relay = env.add<Relay>("relay");
  auto& recorder = env.add<Recorder>("recorder");
  env.connect(emitter.out, relay.in, milliseconds(2));
  env.connect(relay.out, recorder.in, nanoseconds(0));
  env.run();
  ASSERT_EQ(recorder.seen.size(), 1U);
  EXPECT_EQ(recorder.seen[0], std::make_pair(Tag(2000000, 1), 11));
}

TEST(Connection, FanOutSharesOneValueWithoutCopying) {
  class Big : public Reactor {
   public:
    Output<Shared<std::vector<int>>> out{"out", this};
    Shared<std::vector<int>> value = make_shared_value<std::vector<int>>(1000, 3);
    Big(std::string name, Environment& env) : Reactor(std::move(name), env) {
      reaction("send").triggers(startup()).effects(out).body([this] { out.set(value); });
    }
  };
  class Reader : public Reactor {
   public:
    Input<Shared<std::vector<int>>> in{"in", this};
    const std::vector<int>* seen = nullptr;
    Reader(std::string name, Environment& env, std::size_t index)
        : Reactor(std::move(name), env, index) {
      reaction("read").triggers(in).body([this] { seen = in.get().get(); });
    }
  };
  EnvironmentConfig config = at_zero();
  config.workers = 2;
  Environment env(config);
  auto& big = env.add<Big>("big");
  auto readers = env.add_bank<Reader>("reader", 8);
  env.connect_broadcast(big.out, readers.ports(&Reader::in));
  env.run();
  for (Reader* reader : readers) EXPECT_EQ(reader->seen, big.value.get());
}

TEST(Connection, DelayedFanOutDeliversEachValueToEveryReaderAtItsOwnDelay) {
  // Three readers after 0 share one queue and one slot; the fourth, after 2 ms, has its own.
  Environment env(at_zero());
  auto& emitter = env.add<Emitter>("emitter", std::vector<int>{1, 2, 3});
  std::vector<Recorder*> recorders;
  for (int i = 0; i < 4; ++i) recorders.push_back(&env.add<Recorder>("r" + std::to_string(i)));
  for (int i = 0; i < 3; ++i) env.connect(emitter.out, recorders[i]->in, nanoseconds(0));
  env.connect(emitter.out, recorders[3]->in, milliseconds(2));
  env.run();
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(recorders[i]->seen.size(), 3U) << i;
    EXPECT_EQ(recorders[i]->seen[0], std::make_pair(Tag(0, 1), 1));
    EXPECT_EQ(recorders[i]->seen[1], std::make_pair(Tag(0, 2), 2));
    EXPECT_EQ(recorders[i]->seen[2], std::make_pair(Tag(0, 3), 3));
  }
  ASSERT_EQ(recorders[3]->seen.size(), 1U);  // all three land on (2 ms, 0): the last wins
  EXPECT_EQ(recorders[3]->seen[0], std::make_pair(Tag(2000000, 0), 3));
}

TEST(Connection, DelayedFanOutToTwoInputsOfOneReactionRunsItOncePerTag) {
  class Pair : public Reactor {
   public:
    Input<int> a{"a", this};
    Input<int> b{"b", this};
    std::vector<std::pair<Tag, int>> seen;
    Pair(std::string name, Environment& env) : Reactor(std::move(name), env) {
      reaction("sum").triggers(a, b).body([this] {
        ASSERT_TRUE(a.is_present() && b.is_present());
        seen.emplace_back(tag(), a.get() + b.get());
      });
    }
  };
  EnvironmentConfig config = at_zero();
  config.workers = 2;
  Environment env(config);
  auto& emitter = env.add<Emitter>("emitter", std::vector<int>{5, 6});
  auto& pair = env.add<Pair>("pair");
  env.connect(emitter.out, pair.a, nanoseconds(0));
  env.connect(emitter.out, pair.b, nanoseconds(0));
  env.run();
  ASSERT_EQ(pair.seen.size(), 2U);
  EXPECT_EQ(pair.seen[0], std::make_pair(Tag(0, 1), 10));
  EXPECT_EQ(pair.seen[1], std::make_pair(Tag(0, 2), 12));
}

TEST(Connection, MultiportReactionSeesOnlyThePresentChannels) {
  class Gather : public Reactor {
   public:
    InputMultiport<int> in;
    std::vector<std::vector<bool>> presence;
    Gather(std::string name, Environment& env) : Reactor(std::move(name), env), in("in", this, 3) {
      reaction("gather").triggers(in).body([this] {
        presence.push_back({in[0].is_present(), in[1].is_present(), in[2].is_present()});
      });
    }
  };
  Environment env(at_zero());
  auto& a = env.add<Emitter>("a", std::vector<int>{1});
  auto& c = env.add<Emitter>("c", std::vector<int>{1, 2});
  auto& gather = env.add<Gather>("gather");
  env.connect(a.out, gather.in[0]);
  env.connect(c.out, gather.in[2]);
  env.run();
  ASSERT_EQ(gather.presence.size(), 2U);
  EXPECT_EQ(gather.presence[0], (std::vector<bool>{true, false, true}));
  EXPECT_EQ(gather.presence[1], (std::vector<bool>{false, false, true}));
}

TEST(Connection, SourceInputIsReadAfterItsWriterWithoutTriggering) {
  class Sampler : public Reactor {
   public:
    Input<int> in{"in", this};
    Timer tick{"tick", this};
    std::vector<std::pair<bool, int>> samples;
    Sampler(std::string name, Environment& env) : Reactor(std::move(name), env) {
      // Triggered by its timer only; `in` is a source, so the writer runs first at each tag.
      reaction("sample").triggers(tick).sources(in).body(
          [this] { samples.emplace_back(in.is_present(), in.get()); });
    }
  };
  EnvironmentConfig config = at_zero();
  config.workers = 2;
  Environment env(config);
  auto& emitter = env.add<Emitter>("emitter", std::vector<int>{6, 9});
  auto& sampler = env.add<Sampler>("sampler");
  env.connect(emitter.out, sampler.in);
  env.run();
  // Only the timer's tag (0, 0) runs the sampler; emitter's second value at (0, 1) does not.
  ASSERT_EQ(sampler.samples.size(), 1U);
  EXPECT_EQ(sampler.samples[0], std::make_pair(true, 6));
  EXPECT_EQ(sampler.reactions()[0]->level(), 1U);
}

}  // namespace
}  // namespace tagflow::reactors
