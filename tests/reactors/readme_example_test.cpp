// The complete program of reactors/README.md, printing to a stream so its output can be checked.
#include <gtest/gtest.h>

#include <sstream>

#include "reactors/reactors.hpp"

namespace tagflow::reactors {
namespace {

using std::chrono::milliseconds;

class Counter : public Reactor {
 public:
  Output<int> out{"out", this};
  Timer tick{"tick", this, milliseconds(0), milliseconds(10)};
  Counter(std::string name, Environment& env) : Reactor(std::move(name), env) {
    reaction("count").triggers(tick).effects(out).body([this] { out.set(++count_); });
  }

 private:
  int count_ = 0;
};

class Squarer : public Reactor {
 public:
  Input<int> in{"in", this};
  Output<int> out{"out", this};
  Squarer(std::string name, Environment& env, std::size_t index)
      : Reactor(std::move(name), env, index) {
    reaction("square").triggers(in).effects(out).body([this] { out.set(in.get() * in.get()); });
  }
};

class Printer : public Reactor {
 public:
  InputMultiport<int> in;
  std::ostringstream text;
  Printer(std::string name, Environment& env, std::size_t width)
      : Reactor(std::move(name), env), in("in", this, width) {
    reaction("print").triggers(in).body([this] {
      int sum = 0;
      for (std::size_t i = 0; i < in.size(); ++i) {
        if (in[i].is_present()) sum += in[i].get();
      }
      text << tag().to_string(environment().start_tag().time_ns()) << " sum " << sum << "\n";
    });
  }
};

TEST(ReadmeExample, PrintsTheDocumentedSums) {
  EnvironmentConfig config;
  config.workers = 4;
  config.timeout = milliseconds(30);
  Environment env(config);
  auto& counter = env.add<Counter>("counter");
  auto squarers = env.add_bank<Squarer>("squarer", 4);
  auto& printer = env.add<Printer>("printer", squarers.size());
  env.connect_broadcast(counter.out, squarers.ports(&Squarer::in));
  env.connect_each(squarers.ports(&Squarer::out), printer.in, milliseconds(0));
  env.run();
  EXPECT_EQ(printer.text.str(),
            "(t=0.000000000s, m=1) sum 4\n"
            "(t=0.010000000s, m=1) sum 16\n"
            "(t=0.020000000s, m=1) sum 36\n");
  EXPECT_EQ(squarers[3].bank_index(), 3U);
}

}  // namespace
}  // namespace tagflow::reactors
