#include "tracing/trace_merge.hpp"

#include <fstream>
#include <map>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/tracing/trace_files_support.hpp"
#include "tracing/trace_files.hpp"

namespace tagflow::tracing {
namespace {

using testing::event;
using testing::fresh_log_dir;
using testing::kNeverTime;
using testing::write_process;

// Every file's timestamps are CLOCK_REALTIME nanoseconds; the times below are after this one.
constexpr std::int64_t kBase = 1'732'741'200'000'000'000;
constexpr std::int64_t kTag = 1'000'000;  // the run's first tag, 1 ms

/// A coordinator, and a sampler, a replay and a learner of two threads each. The sampler runs on
/// host b, whose clock is 5 ms behind the coordinator's: its file says 5 ms less than the times
/// below (on the coordinator's clock) and clock_offset_ns 5 ms. The sampler's second send never
/// arrived; the coordinator asks the replay for a report twice (the same key, tag NEVER).
std::filesystem::path four_processes() {
  const auto dir = fresh_log_dir("merge");
  const std::int64_t b = kBase - 5'000'000;  // what the sampler's clock says at kBase
  write_process(
      dir, "coordinator", "", 0, {{"coordinator", ""}},
      {event("control_send", kBase + 1'000, 0, 0, kTag, "TAG", "sampler-0", 0, 24),
       event("control_receive", kBase + 1'402'000, 0, 0, kTag, "LTC", "sampler-0", 0, 32),
       event("control_send", kBase + 1'403'000, 0, 0, kTag, "TAG", "replay", 0, 24),
       event("control_send", kBase + 1'404'000, 0, 0, kNeverTime, "REPORT_REQUEST", "replay", 0, 2),
       event("control_receive", kBase + 2'900'000, 0, 0, kTag, "LTC", "replay", 0, 32),
       event("control_send", kBase + 3'000'000, 0, 0, kNeverTime, "REPORT_REQUEST", "replay", 0,
             2)});
  write_process(
      dir, "sampler-0", "b", 5'000'000,
      {{"sampler-0 worker 0", "sampler-0"}, {"sampler-0 network", "sampler-0"}},
      {event("control_receive", b + 1'500, 0, 1, kTag, "TAG", "coordinator", 0, 24),
       event("reaction", b + 2'000, 1'000'000, 0, kTag, "sampler-0.step"),
       event("send", b + 1'100'000, 100'000, 1, kTag, "sampler-0", "replay", 65536, 418),
       event("control_send", b + 1'300'000, 0, 1, kTag, "LTC", "coordinator", 0, 32),
       event("send", b + 1'350'000, 10'000, 1, 2 * kTag, "sampler-0", "replay", 65536, 418)});
  write_process(
      dir, "replay", "", 0, {{"replay worker 0", "replay"}, {"replay network", "replay"}},
      {event("wait_grant", kBase + 1'000'000, 460'000, 0, kTag, ""),
       event("receive", kBase + 1'250'000, 50'000, 1, kTag, "replay", "sampler-0", 65536, 418),
       event("control_receive", kBase + 1'405'000, 0, 1, kNeverTime, "REPORT_REQUEST",
             "coordinator", 0, 2),
       event("control_receive", kBase + 1'450'000, 0, 1, kTag, "TAG", "coordinator", 0, 24),
       event("reaction", kBase + 1'460'000, 400'000, 0, kTag, "replay.insert"),
       event("send", kBase + 1'900'000, 50'000, 1, kTag, "replay", "learner", 196608, 4000),
       event("control_send", kBase + 2'800'000, 0, 1, kTag, "LTC", "coordinator", 0, 32),
       event("control_receive", kBase + 3'000'500, 0, 1, kNeverTime, "REPORT_REQUEST",
             "coordinator", 0, 2)},
      3);
  write_process(
      dir, "learner", "", 0, {{"learner worker 0", "learner"}, {"learner network", "learner"}},
      {event("receive", kBase + 2'000'000, 100'000, 1, kTag, "learner", "replay", 196608, 4000),
       event("reaction", kBase + 2'200'000, 500'000, 0, kTag, "learner.update")});
  return dir;
}

nlohmann::json read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

TEST(TraceMerge, OneChromeTraceWithEveryProcessThreadAndFlowOnTheCoordinatorsClock) {
  const auto dir = four_processes();
  const MergeReport report = merge_traces(dir.string());
  EXPECT_EQ(report.path, (dir / "trace.json").string());
  EXPECT_EQ(report.processes, 4U);
  EXPECT_EQ(report.threads, 7U);
  EXPECT_EQ(report.events, 21U);
  EXPECT_EQ(report.data_flows, 2U);     // sampler-0 → replay, replay → learner
  EXPECT_EQ(report.control_flows, 6U);  // two TAGs, two LTCs, two REPORT_REQUESTs
  EXPECT_EQ(report.unmatched, 1U);      // the sampler's send at 2 ms that never arrived
  EXPECT_EQ(report.dropped, 3U);
  EXPECT_EQ(report.max_clock_error_ns, 150);

  const nlohmann::json trace = read_json(dir / "trace.json");
  EXPECT_EQ(trace.at("displayTimeUnit"), "ns");
  std::map<int, std::string> processes;                             // pid → process_name
  std::map<std::pair<int, int>, std::string> threads;               // (pid, tid) → thread_name
  std::set<std::pair<int, int>> used;                               // (pid, tid) of the events
  std::map<std::string, nlohmann::json> spans;                      // name → the complete event
  std::map<long, std::pair<nlohmann::json, nlohmann::json>> flows;  // id → (s, f)
  std::size_t instants = 0;
  for (const nlohmann::json& e : trace.at("traceEvents")) {
    const std::string ph = e.at("ph");
    const int pid = e.at("pid").get<int>();
    const int tid = e.value("tid", 0);
    if (ph == "M" && e.at("name") == "process_name") processes[pid] = e["args"]["name"];
    if (ph == "M" && e.at("name") == "thread_name") threads[{pid, tid}] = e["args"]["name"];
    if (ph == "X" || ph == "i") {
      used.insert({pid, tid});
      EXPECT_TRUE(e.at("args").contains("tag")) << e.dump();
      EXPECT_EQ(e.at("cat").get<std::string>().empty(), false);
    }
    if (ph == "X") spans[e.at("name")] = e;
    if (ph == "i") {
      ++instants;
      EXPECT_EQ(e.at("s"), "t");
    }
    if (ph == "s") flows[e.at("id")].first = e;
    if (ph == "f") {
      flows[e.at("id")].second = e;
      EXPECT_EQ(e.at("bp"), "e");
    }
  }
  EXPECT_EQ(processes,
            (std::map<int, std::string>{
                {1, "coordinator"}, {2, "learner"}, {3, "replay"}, {4, "sampler-0 (b)"}}));
  EXPECT_EQ(threads.size(), 7U);
  EXPECT_EQ(threads.at({4, 2}), "sampler-0 network");
  for (const auto& track : used) EXPECT_EQ(threads.count(track), 1U) << track.first;
  EXPECT_EQ(instants, 12U);

  // The origin is the coordinator's first TAG; the sampler's times are 5 ms later than its file
  // says.
  EXPECT_DOUBLE_EQ(spans.at("sampler-0.step").at("ts"), 1.0);
  EXPECT_DOUBLE_EQ(spans.at("sampler-0.step").at("dur"), 1000.0);
  EXPECT_DOUBLE_EQ(spans.at("receive from sampler-0").at("ts"), 1249.0);
  EXPECT_DOUBLE_EQ(spans.at("replay.insert").at("ts"), 1459.0);
  const nlohmann::json& send = spans.at("send to learner");
  EXPECT_EQ(send.at("cat"), "send");
  EXPECT_EQ(send.at("args").at("tag"), "1000000/0");
  EXPECT_DOUBLE_EQ(send.at("args").at("tag_ms"), 0.0);
  EXPECT_EQ(send.at("args").at("peer"), "learner");
  EXPECT_EQ(send.at("args").at("port"), 196608);
  EXPECT_EQ(send.at("args").at("bytes"), 4000);

  ASSERT_EQ(flows.size(), 8U);
  std::map<std::string, int> names;
  for (const auto& [id, ends] : flows) {
    const auto& [s, f] = ends;
    ASSERT_FALSE(s.is_null()) << "flow " << id << " has no start";
    ASSERT_FALSE(f.is_null()) << "flow " << id << " has no end";
    EXPECT_EQ(s.at("name"), f.at("name"));
    EXPECT_EQ(s.at("cat"), f.at("cat"));
    EXPECT_LE(s.at("ts").get<double>(), f.at("ts").get<double>()) << s.at("name");
    ++names[s.at("name")];
  }
  EXPECT_EQ(names.at("sampler-0 → replay port 65536"), 1);
  EXPECT_EQ(names.at("replay → learner port 196608"), 1);
  EXPECT_EQ(names.at("coordinator → replay REPORT_REQUEST"), 2);
  EXPECT_EQ(names.at("sampler-0 → coordinator LTC"), 1);
  // The data flow starts on the sampler's network thread at its send and ends on the replay's.
  for (const auto& [id, ends] : flows) {
    if (ends.first.at("name") != "sampler-0 → replay port 65536") continue;
    EXPECT_EQ(ends.first.at("pid"), 4);
    EXPECT_EQ(ends.first.at("tid"), 2);
    EXPECT_DOUBLE_EQ(ends.first.at("ts"), 1099.0);
    EXPECT_EQ(ends.second.at("pid"), 3);
    EXPECT_DOUBLE_EQ(ends.second.at("ts"), 1249.0);
  }

  const nlohmann::json& metadata = trace.at("metadata");
  EXPECT_EQ(metadata.at("clock_alignment").at("b").at("offset_ns"), 5'000'000);
  EXPECT_EQ(metadata.at("clock_alignment").at("b").at("error_ns"), 150);
  EXPECT_EQ(metadata.at("clock_alignment").at("(coordinator's host)").at("offset_ns"), 0);
  EXPECT_EQ(metadata.at("max_clock_error_ns"), 150);
  EXPECT_EQ(metadata.at("first_tag"), "1000000/0");
  EXPECT_EQ(metadata.at("origin_realtime_ns"), kBase + 1'000);
  EXPECT_EQ(metadata.at("dropped").at("replay"), 3);
  EXPECT_EQ(metadata.at("dropped").at("learner"), 0);
  EXPECT_EQ(metadata.at("data_flows"), 2);
  EXPECT_EQ(metadata.at("control_flows"), 6);
  EXPECT_EQ(metadata.at("unmatched"), 1);
}

TEST(TraceMerge, RepeatedControlMessagesPairInOrderAndADroppedSendShiftsNothing) {
  // The coordinator's ring no longer holds the first of three REPORT_REQUESTs; the replay took all
  // three. Pairing by order alone would end the first arrow before it starts.
  const auto dir = fresh_log_dir("merge");
  write_process(
      dir, "coordinator", "", 0, {{"coordinator", ""}},
      {event("control_send", kBase + 200'000, 0, 0, kNeverTime, "REPORT_REQUEST", "replay"),
       event("control_send", kBase + 300'000, 0, 0, kNeverTime, "REPORT_REQUEST", "replay")},
      1);
  write_process(
      dir, "replay", "", 0, {{"replay network", "replay"}},
      {event("control_receive", kBase + 150'000, 0, 0, kNeverTime, "REPORT_REQUEST", "coordinator"),
       event("control_receive", kBase + 250'000, 0, 0, kNeverTime, "REPORT_REQUEST", "coordinator"),
       event("control_receive", kBase + 350'000, 0, 0, kNeverTime, "REPORT_REQUEST",
             "coordinator")});
  const MergeReport report = merge_traces(dir.string());
  EXPECT_EQ(report.control_flows, 2U);
  EXPECT_EQ(report.unmatched, 1U);
  const nlohmann::json trace = read_json(dir / "trace.json");
  std::map<long, std::pair<double, double>> flows;
  for (const nlohmann::json& e : trace.at("traceEvents")) {
    if (e.at("ph") == "s") flows[e.at("id")].first = e.at("ts");
    if (e.at("ph") == "f") flows[e.at("id")].second = e.at("ts");
  }
  ASSERT_EQ(flows.size(), 2U);
  // ts 0 is the first receive; the pairs are (50 µs → 100 µs) and (150 µs → 200 µs).
  std::set<std::pair<double, double>> pairs;
  for (const auto& [id, ends] : flows) pairs.insert(ends);
  EXPECT_EQ(pairs, (std::set<std::pair<double, double>>{{50.0, 100.0}, {150.0, 200.0}}));
}

TEST(TraceMerge, ThreadIdsAreMappedToTracksAndEveryMalformedFileIsNamed) {
  const auto dir = fresh_log_dir("merge");
  // Thread ids need not be 0, 1, ...: the events name threads 7 and 3.
  std::ofstream(dir / "trace" / "replay.trace.json")
      << "{\"format\":\"tagflow-trace-1\",\"process\":\"replay\",\"host\":\"\",\"pid\":1,"
         "\"clock_offset_ns\":0,\"clock_error_ns\":0,\"dropped\":0,\"threads\":["
         "{\"id\":7,\"name\":\"replay worker 0\",\"federate\":\"replay\"},"
         "{\"id\":3,\"name\":\"replay network\",\"federate\":\"replay\"}],\"events\":["
      << event("reaction", 10, 5, 7, kTag, "replay.insert") << ","
      << event("wait_socket", 20, 5, 3, kNeverTime, "") << "]}";
  const ProcessTraceFile file = read_trace_file((dir / "trace" / "replay.trace.json").string());
  ASSERT_EQ(file.events.size(), 2U);
  EXPECT_EQ(file.events[0].thread, 0U);
  EXPECT_EQ(file.events[1].thread, 1U);
  EXPECT_EQ(file.events[0].name, "replay.insert");
  EXPECT_TRUE(file.events[1].tag.is_never());
  EXPECT_EQ(file.party(file.events[0]), "replay");

  const auto bad = [&](const std::string& text, const std::string& why) {
    std::ofstream(dir / "trace" / "sampler-0.trace.json") << text;
    try {
      (void)merge_traces(dir.string());
      ADD_FAILURE() << "merged a file with " << why;
    } catch (const TraceError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("sampler-0.trace.json"), std::string::npos) << what;
      EXPECT_NE(what.find(why), std::string::npos) << what;
    }
  };
  const std::string head =
      "{\"format\":\"tagflow-trace-1\",\"process\":\"sampler-0\",\"threads\":[{\"id\":0,"
      "\"name\":\"w\",\"federate\":\"sampler-0\"}],\"events\":[";
  bad("{\"format\":\"tagflow-trace-1\"", "is not JSON");
  bad("{\"format\":\"tagflow-trace-2\",\"process\":\"x\",\"threads\":[],\"events\":[]}",
      "tagflow-trace-1");
  bad(head + "[\"reaction\",1,2,0,3,0,\"x\",\"\",0]]}",
      "event 1 (counted from 1) has 9 fields, not 10");
  bad(head + "[\"reaction\",1,2,0,3,0,\"x\",\"\",0,0],[\"reaction\",[1],2,0,3,0,\"x\",\"\",0,0]]}",
      "event 2 (counted from 1) has an array as a field");
  bad(head + "[\"meditation\",1,2,0,3,0,\"x\",\"\",0,0]]}",
      "event 1 (counted from 1) is of the unknown kind \"meditation\"");
  bad(head + "[\"reaction\",1,2,0,3,0,\"x\",\"\",0,0],[\"reaction\",1,2,0,3,0,\"x\",\"\",0,0,7]]}",
      "event 2 (counted from 1) has more than 10 fields");
  bad(head + "[\"reaction\",1,2,0,{},0,\"x\",\"\",0,0]]}",
      "event 1 (counted from 1) has an object as a field");
  bad(head + "[\"reaction\",1,2,5,3,0,\"x\",\"\",0,0]]}", "of thread 5, which it does not list");
  bad(head + "[\"reaction\",1,\"long\",0,3,0,\"x\",\"\",0,0]]}", "bad duration_ns");
  bad(head + "[\"reaction\",-9223372036854775807,2,0,3,0,\"x\",\"\",0,0]]}", "bad start_ns");
  bad(head + "[\"reaction\",1,9223372036854775807,0,3,0,\"x\",\"\",0,0]]}", "bad duration_ns");
  bad("{\"format\":\"tagflow-trace-1\",\"process\":\"sampler-0\",\"clock_offset_ns\":"
      "9223372036854775807,\"threads\":[],\"events\":[]}",
      "\"clock_offset_ns\" is out of range");
  bad("{\"format\":\"tagflow-trace-1\",\"process\":\"sampler-0\",\"threads\":[]}", "no \"events\"");
  // The parser's words, not its library's code.
  bad("garbage", "is not JSON (at byte 1): parse error at line 1");
  bad(std::string(100, '\0'), "is not JSON: a NUL byte at byte 1 (the file is not text)");
  bad(head +
          "[\"reaction\",1,2,0,3,0,\"x\",\"\",0,0],[\"reaction\",1,\"long\",0,3,0,\"x\",\"\",0,0]]"
          "}",
      "event 2 (counted from 1) has a bad duration_ns (field 3)");
  try {
    std::ofstream(dir / "trace" / "sampler-0.trace.json") << "garbage";
    (void)merge_traces(dir.string());
  } catch (const TraceError& e) {
    EXPECT_EQ(std::string(e.what()).find("json.exception"), std::string::npos) << e.what();
  }
  // A directory (or a pipe, which would block its reader) is refused before it is opened.
  std::filesystem::remove(dir / "trace" / "sampler-0.trace.json");
  std::filesystem::create_directory(dir / "trace" / "sampler-0.trace.json");
  bad("", "is not a regular file");
  // The merged file of the good run is untouched by the failed merges (none was written).
  EXPECT_FALSE(std::filesystem::exists(dir / "trace.json"));
}

// The coordinator's messages with another host's launcher (its clock requests, the results and
// traces it hands over) have one end only: the launcher is not traced. They are not unmatched;
// a message to a traced process that never arrived still is.
TEST(TraceMerge, MessagesWithAnUntracedLauncherAreNotUnmatched) {
  const auto dir = fresh_log_dir("launcher");
  write_process(
      dir, "coordinator", "", 0, {{"coordinator", ""}},
      {event("control_receive", kBase + 1'000, 0, 0, kNeverTime, "CLOCK", "sampler-0#up", 0, 8),
       event("control_send", kBase + 2'000, 0, 0, kNeverTime, "CLOCK", "sampler-0#up", 0, 16),
       event("control_send", kBase + 3'000, 0, 0, kTag, "TAG", "sampler-0", 0, 24)});
  write_process(dir, "sampler-0", "b", 0, {{"sampler-0 worker 0", "sampler-0"}},
                {event("reaction", kBase + 4'000, 1'000, 0, kTag, "sampler-0.step")});
  const MergeReport report = merge_traces(dir.string());
  EXPECT_EQ(report.control_flows, 0U);
  EXPECT_EQ(report.unmatched, 1U);  // the TAG: sampler-0 is traced, and never received it
}

TEST(TraceMerge, ARunThatWasNotTracedSaysSoAndHow) {
  const auto dir = fresh_log_dir("merge");
  try {
    (void)merge_traces(dir.string());
    FAIL() << "merged a run without traces";
  } catch (const TraceError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("was not traced"), std::string::npos) << what;
    EXPECT_NE(what.find("--trace"), std::string::npos) << what;
  }
  try {
    (void)merge_traces((dir / "nowhere").string());
    FAIL() << "merged a run directory that does not exist";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("no run directory"), std::string::npos) << e.what();
  }
}

TEST(TraceMerge, ALargeRunIsMergedWithEveryFlow) {
  // 30,000 tags of a send and a receive each, in two processes: every message has its arrow.
  const auto dir = fresh_log_dir("merge");
  std::vector<std::string> sends, receives;
  constexpr int kTags = 30'000;
  for (int t = 0; t < kTags; ++t) {
    const std::int64_t at = kBase + t * 10'000;
    sends.push_back(event("send", at, 1'000, 0, t * kTag, "sampler-0", "replay", 65536, 100));
    receives.push_back(
        event("receive", at + 3'000, 1'000, 0, t * kTag, "replay", "sampler-0", 65536, 100));
  }
  write_process(dir, "sampler-0", "", 0, {{"sampler-0 network", "sampler-0"}}, sends);
  write_process(dir, "replay", "", 0, {{"replay network", "replay"}}, receives);
  const MergeReport report = merge_traces(dir.string());
  EXPECT_EQ(report.events, 2U * kTags);
  EXPECT_EQ(report.data_flows, static_cast<std::size_t>(kTags));
  EXPECT_EQ(report.unmatched, 0U);
  const nlohmann::json trace = read_json(dir / "trace.json");
  EXPECT_EQ(trace.at("traceEvents").size(), 2U * 2U + 2U + 2U * kTags + 2U * kTags);
}

}  // namespace
}  // namespace tagflow::tracing
