// Environment::order_before: ordering hints between reactions of one tag (used by federation to
// send a federate's own zero-delay-cycle outputs before it waits for the cycle's inputs).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "reactors/reactors.hpp"

namespace tagflow::reactors {
namespace {

class HintEmitter : public Reactor {
 public:
  Output<int> out{"out", this};
  std::vector<std::string>* log;
  HintEmitter(std::string name, Environment& env, std::vector<std::string>* entries)
      : Reactor(std::move(name), env), log(entries) {
    reaction("emit").triggers(startup()).effects(out).body([this] {
      this->log->push_back(this->name());
      out.set(1);
    });
  }
  Reaction& emit() { return *reactions()[0]; }
};

class Collector : public Reactor {
 public:
  Input<int> in{"in", this};
  std::vector<std::string>* log;
  Collector(std::string name, Environment& env, std::vector<std::string>* entries)
      : Reactor(std::move(name), env), log(entries) {
    reaction("take").triggers(in).body([this] { this->log->push_back(this->name()); });
  }
  Reaction& take() { return *reactions()[0]; }
};

TEST(OrderingHint, PutsTheSecondReactionOnALevelAfterTheFirst) {
  std::vector<std::string> log;
  Environment env;
  auto& late = env.add<HintEmitter>("late", &log);
  auto& early = env.add<HintEmitter>("early", &log);
  auto& sink = env.add<Collector>("sink", &log);
  env.connect(late.out, sink.in);
  env.order_before(early.emit(), late.emit());
  env.assemble();
  EXPECT_EQ(early.emit().level(), 0U);
  EXPECT_EQ(late.emit().level(), 1U);
  EXPECT_EQ(sink.take().level(), 2U);
  env.run();
  EXPECT_EQ(log, (std::vector<std::string>{"early", "late", "sink"}));
}

TEST(OrderingHint, IsSkippedWhenTheSecondAlreadyLeadsToTheFirst) {
  std::vector<std::string> log;
  Environment env;
  auto& source = env.add<HintEmitter>("source", &log);
  auto& sink = env.add<Collector>("sink", &log);
  env.connect(source.out, sink.in);
  env.order_before(sink.take(), source.emit());  // would close a cycle: ignored
  EXPECT_NO_THROW(env.assemble());
  EXPECT_EQ(source.emit().level(), 0U);
  EXPECT_EQ(sink.take().level(), 1U);
}

TEST(OrderingHint, IsRefusedAfterAssembly) {
  std::vector<std::string> log;
  Environment env;
  auto& a = env.add<HintEmitter>("a", &log);
  auto& b = env.add<HintEmitter>("b", &log);
  env.assemble();
  EXPECT_THROW(env.order_before(a.emit(), b.emit()), AssemblyError);
}

}  // namespace
}  // namespace tagflow::reactors
