// Per-process trace files written by hand in the format of tracing/README.md, for the tests of
// tracing/.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace tagflow::tracing::testing {

/// The tag of "no event" (a wait with nothing to run) and of "no tag" (socket polls).
inline constexpr std::int64_t kForeverTime = std::numeric_limits<std::int64_t>::max();
inline constexpr std::uint32_t kForeverStep = std::numeric_limits<std::uint32_t>::max();
inline constexpr std::int64_t kNeverTime = std::numeric_limits<std::int64_t>::min();

/// A fresh LOG_DIR for the current test, with its trace/ directory.
inline std::filesystem::path fresh_log_dir(const std::string& prefix) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) /
      (prefix + "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "trace");
  return dir;
}

/// One event line: [kind, start, duration, thread, tag time, microstep, name, peer, port, bytes].
inline std::string event(const std::string& kind, std::int64_t start, std::int64_t duration,
                         int thread, std::int64_t tag, const std::string& name,
                         const std::string& peer = "", std::uint32_t port = 0,
                         std::uint64_t bytes = 0, std::uint32_t microstep = 0) {
  return "[\"" + kind + "\"," + std::to_string(start) + "," + std::to_string(duration) + "," +
         std::to_string(thread) + "," + std::to_string(tag) + "," + std::to_string(microstep) +
         ",\"" + name + "\",\"" + peer + "\"," + std::to_string(port) + "," +
         std::to_string(bytes) + "]";
}

/// A wait with nothing to run until a message comes (tag FOREVER).
inline std::string idle(const std::string& kind, std::int64_t start, std::int64_t duration,
                        int thread) {
  return event(kind, start, duration, thread, kForeverTime, "", "", 0, 0, kForeverStep);
}

/// Writes LOG_DIR/trace/PROCESS.trace.json with one thread per (name, federate), ids 0, 1, ...;
/// a non-zero clock offset comes with an error bound of 150 ns.
inline void write_process(const std::filesystem::path& log_dir, const std::string& process,
                          const std::string& host, std::int64_t offset,
                          const std::vector<std::pair<std::string, std::string>>& threads,
                          const std::vector<std::string>& events, std::uint64_t dropped = 0) {
  std::string text = "{\"format\":\"tagflow-trace-1\",\"process\":\"" + process + "\",\"host\":\"" +
                     host + "\",\"pid\":42,\"clock\":\"realtime\"," +
                     "\"clock_offset_ns\":" + std::to_string(offset) +
                     ",\"clock_error_ns\":" + std::to_string(offset == 0 ? 0 : 150) +
                     ",\"dropped\":" + std::to_string(dropped) + ",\"threads\":[";
  for (std::size_t t = 0; t < threads.size(); ++t) {
    text += (t == 0 ? "" : ",") + std::string("{\"id\":") + std::to_string(t) + ",\"name\":\"" +
            threads[t].first + "\",\"federate\":\"" + threads[t].second + "\"}";
  }
  text += "],\"events\":[";
  for (std::size_t e = 0; e < events.size(); ++e) text += (e == 0 ? "" : ",\n") + events[e];
  text += "]}";
  std::ofstream(log_dir / "trace" / (process + ".trace.json")) << text;
}

}  // namespace tagflow::tracing::testing
