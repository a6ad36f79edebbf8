#include "common/trace_recorder.hpp"

#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace tagflow::trace {
namespace {

namespace fs = std::filesystem;

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

fs::path temp_file(const std::string& name) {
  return fs::path(::testing::TempDir()) / ("trace_recorder_" + name + ".json");
}

TEST(TraceRecorder, RecordsNothingWhileNotStarted) {
  TraceRecorder::stop();
  EXPECT_EQ(active(), nullptr);
  {
    const Span span(Kind::kReaction, Tag(5, 0));
    EXPECT_FALSE(span.on());
  }
  TraceRecorder& recorder = TraceRecorder::start({"p", "", 16});
  EXPECT_EQ(recorder.held(), 0U);
  TraceRecorder::stop();
}

TEST(TraceRecorder, WritesEveryThreadsEventsWithTheirNamesAndTags) {
  TraceRecorder& recorder = TraceRecorder::start({"sampler-0", "a", 100});
  const std::uint32_t reaction = recorder.intern("sampler-0.step");
  EXPECT_EQ(recorder.intern("sampler-0.step"), reaction);
  recorder.name_thread("sampler-0 worker 0", "sampler-0");
  {
    Span span(Kind::kSend, Tag(1'000'000, 2), recorder.intern("sampler-0"),
              recorder.intern("replay"));
    span.event().port = 65536;
    span.event().bytes = 1234;
  }
  recorder.record({Kind::kReaction, 10, 5, Tag(2'000'000, 0), reaction, 0, 0, 0});
  std::thread other([&] {
    active()->name_thread("sampler-0 network", "sampler-0");
    active()->instant(Kind::kControlSend, Tag(3, 1), active()->intern("LTC \"quoted\""),
                      active()->intern("coordinator"), 0, 42);
  });
  other.join();
  const fs::path path = temp_file("threads");
  recorder.write(path.string());
  TraceRecorder::stop();

  const nlohmann::json trace = read_json(path);
  EXPECT_EQ(trace["format"], "tagflow-trace-1");
  EXPECT_EQ(trace["process"], "sampler-0");
  EXPECT_EQ(trace["host"], "a");
  EXPECT_EQ(trace["dropped"], 0);
  ASSERT_EQ(trace["threads"].size(), 2U);
  EXPECT_EQ(trace["threads"][0]["name"], "sampler-0 worker 0");
  EXPECT_EQ(trace["threads"][1]["name"], "sampler-0 network");
  EXPECT_EQ(trace["threads"][1]["federate"], "sampler-0");
  ASSERT_EQ(trace["events"].size(), 3U);
  const nlohmann::json& send = trace["events"][0];
  ASSERT_EQ(send.size(), 10U);
  EXPECT_EQ(send[0], "send");
  EXPECT_GE(send[2].get<std::int64_t>(), 0);
  EXPECT_EQ(send[3], 0);
  EXPECT_EQ(send[4], 1'000'000);
  EXPECT_EQ(send[5], 2);
  EXPECT_EQ(send[6], "sampler-0");
  EXPECT_EQ(send[7], "replay");
  EXPECT_EQ(send[8], 65536);
  EXPECT_EQ(send[9], 1234);
  EXPECT_EQ(trace["events"][1],
            nlohmann::json::parse(R"(["reaction",10,5,0,2000000,0,"sampler-0.step","",0,0])"));
  const nlohmann::json& control = trace["events"][2];
  EXPECT_EQ(control[0], "control_send");
  EXPECT_EQ(control[2], 0);
  EXPECT_EQ(control[3], 1);
  EXPECT_EQ(control[6], "LTC \"quoted\"");
  EXPECT_EQ(control[9], 42);
}

TEST(TraceRecorder, KeepsEachThreadsLatestEventsAndCountsTheRest) {
  TraceRecorder& recorder = TraceRecorder::start({"p", "", 4});
  for (int i = 0; i < 10; ++i) {
    recorder.record({Kind::kReaction, i, 1, Tag(i, 0), 0, 0, 0, 0});
  }
  EXPECT_EQ(recorder.held(), 4U);
  EXPECT_EQ(recorder.dropped(), 6U);
  const fs::path path = temp_file("ring");
  recorder.write(path.string());
  TraceRecorder::stop();
  const nlohmann::json trace = read_json(path);
  EXPECT_EQ(trace["dropped"], 6);
  ASSERT_EQ(trace["events"].size(), 4U);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(trace["events"][i][1], 6 + i);  // oldest first
}

TEST(TraceRecorder, AThreadThatRecordedBeforeARestartGetsAFreshRing) {
  TraceRecorder& first = TraceRecorder::start({"p", "", 8});
  first.record({Kind::kReaction, 1, 1, Tag(1, 0), 0, 0, 0, 0});
  TraceRecorder& second = TraceRecorder::start({"q", "", 8});
  second.record({Kind::kReaction, 2, 1, Tag(2, 0), 0, 0, 0, 0});
  EXPECT_EQ(first.held(), 1U);
  EXPECT_EQ(second.held(), 1U);
  TraceRecorder::stop();
}

}  // namespace
}  // namespace tagflow::trace
