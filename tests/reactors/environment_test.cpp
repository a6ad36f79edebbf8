// Assembly errors name the ports and reactions involved; phases are checked.
#include "reactors/environment.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "reactors/reactors.hpp"

namespace tagflow::reactors {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;

class IntSource : public Reactor {
 public:
  Output<int> out{"out", this};
  IntSource(std::string name, Environment& env) : Reactor(std::move(name), env) {
    reaction("send").triggers(startup()).effects(out).body([this] { out.set(1); });
  }
};

class IntSink : public Reactor {
 public:
  Input<int> in{"in", this};
  Input<double> other{"other", this};
  int received = 0;
  IntSink(std::string name, Environment& env) : Reactor(std::move(name), env) {
    reaction("take").triggers(in, other).body([this] { ++received; });
  }
};

std::string assembly_error(Environment& env) {
  try {
    env.assemble();
  } catch (const AssemblyError& error) {
    return error.what();
  }
  return "";
}

TEST(Environment, RejectsATypeMismatchNamingBothPorts) {
  Environment env;
  auto& source = env.add<IntSource>("source");
  auto& sink = env.add<IntSink>("sink");
  env.connect(source.out, sink.other);
  const std::string error = assembly_error(env);
  EXPECT_THAT(error, HasSubstr("type mismatch"));
  EXPECT_THAT(error, HasSubstr("source.out carries int"));
  EXPECT_THAT(error, HasSubstr("sink.other expects double"));
}

TEST(Environment, RejectsTwoWritersToOnePortNamingBoth) {
  Environment env;
  auto& a = env.add<IntSource>("a");
  auto& b = env.add<IntSource>("b");
  auto& sink = env.add<IntSink>("sink");
  env.connect(a.out, sink.in);
  env.connect(b.out, sink.in);
  const std::string error = assembly_error(env);
  EXPECT_THAT(error, HasSubstr("two writers to one port"));
  EXPECT_THAT(error, HasSubstr("sink.in is connected from both a.out and b.out"));
}

TEST(Environment, RejectsAConnectionMadeTwiceAsSuch) {
  Environment env;
  auto& a = env.add<IntSource>("a");
  auto& sink = env.add<IntSink>("sink");
  env.connect(a.out, sink.in);
  env.connect(a.out, sink.in);
  EXPECT_EQ(assembly_error(env),
            "connection a.out -> sink.in is made twice: connect a pair of ports once");
}

TEST(Environment, AReactionChangedAfterAssemblyIsNamedAsChangedNotAsNew) {
  Environment env;
  auto& a = env.add<IntSource>("a");
  auto& sink = env.add<IntSink>("sink");
  env.connect(a.out, sink.in);
  env.assemble();
  try {
    a.reactions().front()->triggers(a.out);
    FAIL() << "a trigger added after assembly";
  } catch (const AssemblyError& e) {
    EXPECT_STREQ(e.what(),
                 "reaction a.send changed after assembly: declare its triggers, sources, effects "
                 "and body before Environment::assemble()");
  }
}

TEST(Environment, RejectsConnectionsInTheWrongDirection) {
  Environment env;
  auto& source = env.add<IntSource>("source");
  auto& sink = env.add<IntSink>("sink");
  env.connect(sink.in, source.out);
  EXPECT_THAT(assembly_error(env), HasSubstr("sink.in is an input"));
}

class Echo : public Reactor {
 public:
  Input<int> in{"in", this};
  Output<int> out{"out", this};
  Echo(std::string name, Environment& env) : Reactor(std::move(name), env) {
    reaction("echo").triggers(in).effects(out).body([this] { out.set(in.get()); });
  }
};

TEST(Environment, RejectsACycleWithNoDelayNamingItsReactionsAndPorts) {
  Environment env;
  auto& a = env.add<Echo>("a");
  auto& b = env.add<Echo>("b");
  env.connect(a.out, b.in);
  env.connect(b.out, a.in);
  const std::string error = assembly_error(env);
  EXPECT_THAT(error, HasSubstr("cycle with no delay"));
  EXPECT_THAT(error, HasSubstr("a.echo"));
  EXPECT_THAT(error, HasSubstr("b.echo"));
  EXPECT_THAT(error, HasSubstr("[a.out -> b.in]"));
  EXPECT_THAT(error, HasSubstr("[b.out -> a.in]"));
}

TEST(Environment, AcceptsACycleBrokenByAnAfterDelay) {
  Environment env;
  auto& a = env.add<Echo>("a");
  auto& b = env.add<Echo>("b");
  env.connect(a.out, b.in);
  env.connect(b.out, a.in, milliseconds(0));
  EXPECT_NO_THROW(env.assemble());
  EXPECT_EQ(env.level_count(), 2U);
}

TEST(Environment, RejectsAnEffectOwnedByAnotherReactor) {
  class Thief : public Reactor {
   public:
    Thief(std::string name, Environment& env, Output<int>& foreign)
        : Reactor(std::move(name), env) {
      reaction("steal").triggers(startup()).effects(foreign).body([] {});
    }
  };
  Environment env;
  auto& source = env.add<IntSource>("source");
  env.add<Thief>("thief", source.out);
  const std::string error = assembly_error(env);
  EXPECT_THAT(error, HasSubstr("thief.steal declares source.out as an effect"));
}

TEST(Environment, RejectsAReactionWithoutBodyOrTrigger) {
  class Incomplete : public Reactor {
   public:
    Incomplete(std::string name, Environment& env, bool with_body) : Reactor(std::move(name), env) {
      auto& r = reaction("r");
      if (with_body) r.body([] {});
      if (!with_body) r.triggers(startup());
    }
  };
  {
    Environment env;
    env.add<Incomplete>("x", false);
    EXPECT_THAT(assembly_error(env), HasSubstr("x.r has no body"));
  }
  {
    Environment env;
    env.add<Incomplete>("y", true);
    EXPECT_THAT(assembly_error(env), HasSubstr("y.r has no trigger"));
  }
}

TEST(Environment, RejectsAWidthMismatchInConnectEach) {
  class Wide : public Reactor {
   public:
    OutputMultiport<int> out;
    Wide(std::string name, Environment& env, std::size_t width)
        : Reactor(std::move(name), env), out("out", this, width) {}
  };
  class WideIn : public Reactor {
   public:
    InputMultiport<int> in;
    WideIn(std::string name, Environment& env, std::size_t width)
        : Reactor(std::move(name), env), in("in", this, width) {}
  };
  Environment env;
  auto& from = env.add<Wide>("from", 3);
  auto& to = env.add<WideIn>("to", 2);
  EXPECT_THROW(env.connect_each(from.out, to.in), AssemblyError);
}

TEST(Environment, RejectsDeclarationsAfterAssembly) {
  Environment env;
  auto& source = env.add<IntSource>("source");
  auto& sink = env.add<IntSink>("sink");
  env.assemble();
  EXPECT_THROW(env.add<IntSource>("late"), AssemblyError);
  EXPECT_THROW(env.connect(source.out, sink.in), AssemblyError);
}

TEST(Environment, RunsOnlyOnce) {
  Environment env;
  env.add<IntSource>("source");
  env.run();
  EXPECT_THROW(env.run(), std::logic_error);
}

TEST(Environment, FindsReactorsAndPortsByName) {
  Environment env;
  auto& source = env.add<IntSource>("source");
  auto& sink = env.add<IntSink>("sink");
  ASSERT_EQ(env.find_reactor("sink"), &sink);
  PortBase* out = source.find_port("out");
  PortBase* in = env.find_reactor("sink")->find_port("in");
  ASSERT_NE(out, nullptr);
  ASSERT_NE(in, nullptr);
  EXPECT_EQ(source.find_port("missing"), nullptr);
  env.connect(*out, *in);
  env.run();
  EXPECT_EQ(sink.received, 1);
}

}  // namespace
}  // namespace tagflow::reactors
