#include "nodes/node_params.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

namespace tagflow::nodes {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ParamError& e) {
    return e.what();
  }
  return "";
}

TEST(NodeParams, TypedGettersReadValuesAndFallBackToDefaults) {
  const NodeParams p("learner", {{"batch_size", "64"},
                                 {"lr", "0.001"},
                                 {"hidden", "[32, 16]"},
                                 {"double_dqn", "false"},
                                 {"max_wait", "2ms"}});
  EXPECT_EQ(p.get_int("batch_size", 1), 64);
  EXPECT_EQ(p.get_int("missing", 5), 5);
  EXPECT_DOUBLE_EQ(p.get_double("lr", 1.0, 0.0, 1.0), 0.001);
  EXPECT_EQ(p.get_sizes("hidden", {}), (std::vector<int>{32, 16}));
  EXPECT_FALSE(p.get_bool("double_dqn", true));
  EXPECT_EQ(p.get_duration("max_wait", std::chrono::nanoseconds(0)), std::chrono::milliseconds(2));
}

TEST(NodeParams, ErrorsNameTheNodeTheParamAndItsLine) {
  const NodeParams p("replay", {{"capacity", "lots"}, {"selektor", "uniform"}},
                     {{"capacity", 30}, {"selektor", 31}});
  EXPECT_EQ(error_of([&] { (void)p.get_int("capacity", 1); }),
            "node 'replay': param 'capacity' (line 30): expected an integer, got 'lots'");
  const std::string unknown = error_of([&] { p.check_known({"capacity", "selector"}); });
  EXPECT_NE(unknown.find("param 'selektor' (line 31): unknown param"), std::string::npos)
      << unknown;
}

TEST(NodeParams, RangesAreChecked) {
  const NodeParams p("s", {{"n", "-1"}, {"x", "2.5"}, {"h", "64,x"}, {"b", "maybe"}});
  EXPECT_NE(error_of([&] { (void)p.get_int("n", 1, 0); }).find("at least 0"), std::string::npos);
  EXPECT_NE(error_of([&] { (void)p.get_double("x", 0, 0, 1); }).find("must be in"),
            std::string::npos);
  EXPECT_FALSE(error_of([&] { (void)p.get_sizes("h", {}); }).empty());
  EXPECT_EQ(error_of([&] {
              (void)NodeParams("s", {{"x", "-1e400"}}).get_double("x", 0, -1, 1);
            }),
            "node 's': param 'x': '-1e400' is beyond a number's range (about ±1.8e308)");
  EXPECT_EQ(error_of([&] { (void)p.get_bool("b", true); }),
            "node 's': param 'b': expected true or false (yes/no and on/off are read as true/false "
            "too), got 'maybe'");
}

// A param's booleans take the words the file's other booleans (YAML's) take, in the same cases:
// `time_input: yes` was refused where `per_agent: yes` in the same file was read as true.
TEST(NodeParams, BooleansTakeTheWordsYamlTakes) {
  for (const char* yes :
       {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON", "y", "Y"}) {
    SCOPED_TRACE(yes);
    EXPECT_TRUE(NodeParams("s", {{"b", yes}}).get_bool("b", false));
  }
  for (const char* no : {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF", "n"}) {
    SCOPED_TRACE(no);
    EXPECT_FALSE(NodeParams("s", {{"b", no}}).get_bool("b", true));
  }
  for (const char* bad : {"tRUE", "yES", "1", "0", "", "truee"}) {
    SCOPED_TRACE(bad);
    EXPECT_FALSE(error_of([&] {
                   (void)NodeParams("s", {{"b", bad}}).get_bool("b", true);
                 }).empty());
  }
}

TEST(NodeParams, NumbersAreDecimalWithoutBlanks) {
  for (const char* good : {"8", "+8", "008", "-8"}) {
    SCOPED_TRACE(good);
    const NodeParams p("s", {{"n", good}, {"x", good}});
    EXPECT_EQ(std::abs(p.get_int("n", 1, -10)), 8);
    EXPECT_DOUBLE_EQ(std::abs(p.get_double("x", 0, -10, 10)), 8.0);
  }
  for (const char* bad : {" 8", "8 ", "\t8", "0x8", "8.0.", "1e", "inf", "nan", "", "--8"}) {
    SCOPED_TRACE(bad);
    const NodeParams p("s", {{"n", bad}, {"x", bad}});
    EXPECT_EQ(error_of([&] { (void)p.get_int("n", 1, -10); }),
              std::string("node 's': param 'n': expected an integer, got '") + bad + "'");
    EXPECT_EQ(error_of([&] { (void)p.get_double("x", 0, -10, 10); }),
              std::string("node 's': param 'x': expected a number, got '") + bad + "'");
  }
  const NodeParams p("s", {{"x", "0.5"}, {"y", "1e-3"}, {"z", "-.5E1"}});
  EXPECT_DOUBLE_EQ(p.get_double("x", 0, -10, 10), 0.5);
  EXPECT_DOUBLE_EQ(p.get_double("y", 0, -10, 10), 0.001);
  EXPECT_DOUBLE_EQ(p.get_double("z", 0, -10, 10), -5.0);
}

TEST(NodeParams, AListOrAMapIsNoString) {
  const NodeParams p("learner", {{"export_dir", "{a: 1}"}, {"hidden", "[64, 32]"}},
                     {{"export_dir", 12}, {"hidden", 13}},
                     {{"export_dir", "a map"}, {"hidden", "a list"}});
  EXPECT_EQ(error_of([&] { (void)p.get_string("export_dir", ""); }),
            "node 'learner': param 'export_dir' (line 12): expected a string, got a map ({a: 1})");
  EXPECT_EQ(error_of([&] { (void)p.get_string("hidden", ""); }),
            "node 'learner': param 'hidden' (line 13): expected a string, got a list ([64, 32])");
  EXPECT_EQ(p.get_sizes("hidden", {}), (std::vector<int>{64, 32}));
}

TEST(NodeParams, SizesAreCommaSeparatedOrAListAndNothingElse) {
  for (const char* good : {"64", "64,32", " 64 , 32 ", "[64, 32]", "[64]", "064"}) {
    SCOPED_TRACE(good);
    const NodeParams p("s", {{"h", good}});
    EXPECT_EQ(p.get_sizes("h", {}).front(), 64);
  }
  for (const char* bad : {"6 4", "64]32", "[[6[4", "]64", "[64", "64,", ",64", "64,,32", "", "[]",
                          "0", "1048577", "99999999999", "- 64"}) {
    SCOPED_TRACE(bad);
    const NodeParams p("s", {{"h", bad}});
    EXPECT_FALSE(error_of([&] { (void)p.get_sizes("h", {}); }).empty());
  }
}

}  // namespace
}  // namespace tagflow::nodes
