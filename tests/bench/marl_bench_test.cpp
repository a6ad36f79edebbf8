// `tagflow bench marl --quick` as users run it: every placement of the MARL inference workload
// reports its seconds and per-joint-step latency, and the ratios compare figures of the same run.
// Shape only, never speed: performance is judged by running the benchmark.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/bench_run.hpp"

namespace tagflow::bench {
namespace {

TEST(MarlBench, EveryPlacementReportsItsSecondsAndStepLatency) {
  if (!TAGFLOW_HAS_TORCH) GTEST_SKIP() << "the benchmark runs in tagflow-torch";
  const testing::BenchRun run = testing::run_quick_bench("marl");
  ASSERT_EQ(run.command.exit_code, 0) << run.command.output;
  const nlohmann::json& doc = run.doc;
  EXPECT_EQ(doc.at("benchmark"), "marl");
  const std::map<std::string, double>& names = run.values;
  for (const auto& [name, value] : names) EXPECT_GT(value, 0.0) << name;
  for (const char* placement :
       {"plain_loop", "reactor_one_process", "reactor_inference_2_processes", "actor_one_process",
        "actor_inference_2_processes"}) {
    for (const char* figure : {"_seconds", "_step_p50", "_step_p99"}) {
      EXPECT_EQ(names.count(std::string(placement) + figure), 1U) << placement << figure;
    }
  }
  // Each ratio is the baseline's time over the subject's (larger: the subject is faster).
  const auto expect_ratio = [&](const std::string& subject, const std::string& baseline) {
    const std::string label = subject + "/" + baseline;
    ASSERT_TRUE(doc.at("ratios").contains(label)) << label;
    EXPECT_NEAR(doc.at("ratios").at(label).get<double>(),
                names.at(baseline + "_seconds") / names.at(subject + "_seconds"),
                1e-9 * doc.at("ratios").at(label).get<double>())
        << label;
  };
  expect_ratio("reactor_one_process", "plain_loop");
  expect_ratio("actor_one_process", "reactor_one_process");
  expect_ratio("actor_inference_2_processes", "reactor_inference_2_processes");
  expect_ratio("reactor_inference_2_processes", "raw_inference_2_processes");
  expect_ratio("reactor_inference_2_processes", "reactor_one_process");
}

// `--only tj4-in-process`: the three one-process placements of TrafficJunction4 and nothing
// that starts a process; an unknown workload is refused naming the ones there are, before
// LibTorch starts.
TEST(MarlBench, InProcessRunsTheOneProcessPlacementsAlone) {
  if (!TAGFLOW_HAS_TORCH) GTEST_SKIP() << "the benchmark runs in tagflow-torch";
  const testing::BenchRun run = testing::run_quick_bench("marl", "--only tj4-in-process");
  ASSERT_EQ(run.command.exit_code, 0) << run.command.output;
  const nlohmann::json& doc = run.doc;
  const std::map<std::string, double>& names = run.values;
  for (const char* placement : {"plain_loop", "reactor_one_process", "actor_one_process"}) {
    EXPECT_EQ(names.count(std::string(placement) + "_seconds"), 1U) << placement;
  }
  for (const auto& [name, value] : names) {
    EXPECT_EQ(name.find("processes"), std::string::npos) << name;
  }
  EXPECT_TRUE(doc.at("ratios").contains("reactor_one_process/plain_loop"));

  const auto wrong =
      testing::run_command(testing::tagflow_binary() + " bench marl --quick --only tj5 2>&1");
  EXPECT_EQ(wrong.exit_code, 2);
  EXPECT_NE(wrong.output.find("tagflow bench marl: --only takes tj4, tj10, tj4-in-process or "
                              "tj10-in-process, not 'tj5'"),
            std::string::npos)
      << wrong.output;
  // Refused by tagflow before LibTorch starts: tagflow-torch's BLAS line is not printed.
  EXPECT_EQ(wrong.output.find("BLAS:"), std::string::npos) << wrong.output;
}

}  // namespace
}  // namespace tagflow::bench
