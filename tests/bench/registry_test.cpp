// Tests of bench/registry.hpp and of `tagflow bench` as users run it. These check the shape of
// what every benchmark reports, never its speed: performance is judged by running the benchmarks.
#include "bench/registry.hpp"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include <gtest/gtest.h>

#include "tests/support/run_command.hpp"

namespace tagflow::bench {
namespace {

using testing::run_command;
using testing::tagflow_binary;

TEST(BenchRegistry, NamesAreUniqueAndEachEntryCanRun) {
  ASSERT_FALSE(benchmarks().empty());
  std::set<std::string> names;
  for (const BenchEntry& entry : benchmarks()) {
    EXPECT_TRUE(names.insert(entry.name).second) << entry.name;
    EXPECT_EQ(static_cast<bool>(entry.run), !entry.torch) << entry.name;
    EXPECT_FALSE(entry.description.empty()) << entry.name;
  }
  EXPECT_EQ(names.size(), 14U);  // every `tagflow bench` name (docs/benchmarks.md)
  for (const std::string& name : names) EXPECT_NE(find_benchmark(name), nullptr) << name;
  EXPECT_EQ(find_benchmark("no-such-benchmark"), nullptr);
}

TEST(BenchCommand, QuickCodecRunWritesTheDocumentedJson) {
  const std::string path = ::testing::TempDir() + "codec_bench.json";
  std::filesystem::remove(path);
  const auto result = run_command(tagflow_binary() + " bench codec --quick --json " + path);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("pack: blob/array"), std::string::npos) << result.output;
  std::ifstream in(path);
  const nlohmann::json doc = nlohmann::json::parse(in);
  EXPECT_EQ(doc["benchmark"], "codec");
  ASSERT_FALSE(doc["results"].empty());
  for (const auto& r : doc["results"]) {
    EXPECT_TRUE(r["name"].is_string());
    EXPECT_GT(r["value"].get<double>(), 0.0);
    EXPECT_EQ(r["unit"], "GB/s");
  }
  EXPECT_TRUE(doc["ratios"].contains("pack: blob/array"));
}

TEST(BenchCommand, UnknownBenchmarkIsAnErrorThatListsTheKnownOnes) {
  const auto result = run_command(tagflow_binary() + " bench nope 2>&1");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.output.find("unknown benchmark 'nope'"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("codec"), std::string::npos) << result.output;
}

// A LibTorch command run through `tagflow` has its usage name `tagflow`, as the user typed it.
TEST(BenchCommand, TheHelpOfACommandHandedToTagflowTorchSaysTagflow) {
  if (!TAGFLOW_HAS_TORCH) GTEST_SKIP() << "the command runs in tagflow-torch";
  for (const char* command : {" bench marl --help", " train --help"}) {
    const auto help = run_command(tagflow_binary() + command + " 2>&1");
    EXPECT_EQ(help.exit_code, 0) << help.output;
    EXPECT_NE(help.output.find("Usage: tagflow "), std::string::npos) << help.output;
    EXPECT_EQ(help.output.find("tagflow-torch "), std::string::npos) << help.output;
  }
}

// --only and --print belong to the benchmarks that take them; elsewhere they are refused rather
// than ignored.
TEST(BenchCommand, OnlyAndPrintAreRefusedWhereTheyMeanNothing) {
  const auto only = run_command(tagflow_binary() + " bench codec --quick --only gym 2>&1");
  EXPECT_EQ(only.exit_code, 2);
  EXPECT_NE(only.output.find("--only is for `tagflow bench paper` and `tagflow bench marl`, not "
                             "codec"),
            std::string::npos)
      << only.output;
  const auto print = run_command(tagflow_binary() + " bench envs --quick --print 2>&1");
  EXPECT_EQ(print.exit_code, 2);
  EXPECT_NE(print.output.find("--print is for `tagflow bench paper`, not envs"), std::string::npos)
      << print.output;
}

}  // namespace
}  // namespace tagflow::bench
