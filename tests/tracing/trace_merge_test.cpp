#include "tracing/trace_merge.hpp"

#include <fstream>
#include <map>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/tracing/trace_files_support.hpp"
#include "tracing/trace_files.hpp"

namespace tagflow::tracing {
namespace {

using testing::event;
using testing::fresh_log_dir;
using testing::write_process;

/// A coordinator, a replay on its host and a sampler on host b whose clock is 5 ms behind: the
/// sampler's send at its 1000 ns is 5 ms + 1000 ns on the coordinator's clock.
std::filesystem::path three_processes() {
  const auto dir = fresh_log_dir("merge");
  write_process(dir, "coordinator", "", 0, {{"coordinator", ""}},
                {event("control_receive", 5'001'500, 0, 0, 1'000'000, "LTC", "sampler-0"),
                 event("control_send", 5'001'600, 0, 0, 1'000'000, "TAG", "replay")});
  write_process(dir, "sampler-0", "b", 5'000'000,
                {{"sampler-0 worker 0", "sampler-0"}, {"sampler-0 network", "sampler-0"}},
                {event("reaction", 900, 300, 0, 1'000'000, "sampler-0.step"),
                 event("send", 1'000, 100, 1, 1'000'000, "sampler-0", "replay", 65536, 418),
                 event("control_send", 1'300, 0, 1, 1'000'000, "LTC", "coordinator")});
  write_process(dir, "replay", "", 0, {{"replay worker 0", "replay"}},
                {event("wait_grant", 5'000'950, 800, 0, 1'000'000, ""),
                 event("receive", 5'001'200, 50, 0, 1'000'000, "replay", "sampler-0", 65536, 418),
                 event("control_receive", 5'001'700, 0, 0, 1'000'000, "TAG", "coordinator"),
                 event("reaction", 5'001'800, 400, 0, 1'000'000, "replay.insert"),
                 event("send", 5'002'300, 10, 0, 2'000'000, "replay", "learner", 196608, 64)},
                3);
  return dir;
}

TEST(TraceMerge, OneChromeTraceWithEveryProcessThreadAndFlowOnTheCoordinatorsClock) {
  const auto dir = three_processes();
  const MergeReport report = merge_traces(dir.string());
  EXPECT_EQ(report.path, (dir / "trace.json").string());
  EXPECT_EQ(report.processes, 3U);
  EXPECT_EQ(report.threads, 4U);
  EXPECT_EQ(report.events, 10U);
  EXPECT_EQ(report.data_flows, 1U);
  EXPECT_EQ(report.control_flows, 2U);  // LTC sampler-0 → coordinator, TAG coordinator → replay
  EXPECT_EQ(report.unmatched, 1U);      // the replay's send to a learner that was not traced
  EXPECT_EQ(report.dropped, 3U);
  EXPECT_EQ(report.max_clock_error_ns, 150);

  std::ifstream in(dir / "trace.json");
  const nlohmann::json trace = nlohmann::json::parse(in);
  std::map<int, std::string> processes;
  std::map<std::string, double> x_ts;  // name → ts of complete events
  std::map<long, std::pair<double, double>> flows;
  std::size_t thread_names = 0;
  for (const nlohmann::json& e : trace.at("traceEvents")) {
    const std::string ph = e.at("ph");
    if (ph == "M" && e.at("name") == "process_name") processes[e.at("pid")] = e["args"]["name"];
    if (ph == "M" && e.at("name") == "thread_name") ++thread_names;
    if (ph == "X") x_ts[e.at("name")] = e.at("ts");
    if (ph == "s") flows[e.at("id")].first = e.at("ts");
    if (ph == "f") {
      flows[e.at("id")].second = e.at("ts");
      EXPECT_EQ(e.at("bp"), "e");
    }
  }
  EXPECT_EQ(thread_names, 4U);
  EXPECT_EQ(processes.size(), 3U);
  EXPECT_EQ(processes[2], "replay");
  EXPECT_EQ(processes[3], "sampler-0 (b)");
  // The origin is the sampler's reaction: 900 ns + 5 ms on the coordinator's clock.
  EXPECT_DOUBLE_EQ(x_ts.at("sampler-0.step"), 0.0);
  EXPECT_DOUBLE_EQ(x_ts.at("send to replay"), 0.1);
  EXPECT_DOUBLE_EQ(x_ts.at("receive from sampler-0"), 0.3);
  EXPECT_DOUBLE_EQ(x_ts.at("replay.insert"), 0.9);
  ASSERT_EQ(flows.size(), 3U);
  for (const auto& [id, ends] : flows) EXPECT_LE(ends.first, ends.second) << "flow " << id;
  const nlohmann::json& metadata = trace.at("metadata");
  EXPECT_EQ(metadata.at("clock_alignment").at("b").at("offset_ns"), 5'000'000);
  EXPECT_EQ(metadata.at("clock_alignment").at("b").at("error_ns"), 150);
  EXPECT_EQ(metadata.at("first_tag"), "1000000/0");
  EXPECT_EQ(metadata.at("dropped").at("replay"), 3);
}

TEST(TraceMerge, ARunWithoutTracesOrWithABadFileIsNamed) {
  const auto dir = fresh_log_dir("merge");
  try {
    (void)merge_traces(dir.string());
    FAIL() << "merged a run without traces";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("--trace"), std::string::npos) << e.what();
  }
  std::ofstream(dir / "trace" / "replay.trace.json") << "{\"format\":\"tagflow-trace-1\"";
  try {
    (void)merge_traces(dir.string());
    FAIL() << "merged a truncated file";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("replay.trace.json"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tagflow::tracing
