// summarize_trace(): where a traced run's time went (tracing/README.md, "tagflow trace
// summary"), from the per-process files (trace_files.hpp).
//
// Per federate (the coordinator as one more row): its wall time, from its first recorded event to
// its last, split into computing (reactions), messaging (sending and taking data messages),
// waiting for data (a granted tag whose counted messages had not all arrived, or nothing to run
// until a message comes), waiting for a grant, waiting for physical time, and the rest. Where
// spans overlap (a message received while the scheduler waits, a network thread sending while the
// worker computes) each instant counts once, for the first of those in that order.
// The slowest tags: per logical tag, the wall time from the first event at it to the last, over
// every federate; for each of the slowest, the chain of waits that made it late (the critical
// path, walked back from the event that ended it: a wait for data leads to the message that
// arrived last and on to its sender, a wait for a grant to the coordinator).
// write_summary_svg(): the per-federate split as a stacked bar chart (SVG, no dependency).
// Thread-safety: pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "common/tag.hpp"
#include "tracing/trace_files.hpp"

namespace tagflow::tracing {

enum TimeCategory : std::size_t {
  kComputing,
  kMessaging,
  kWaitingForData,
  kWaitingForGrant,
  kWaitingForTime,
  kOther,
  kCategoryCount
};
[[nodiscard]] const char* category_name(TimeCategory category);

struct FederateTime {
  std::string federate;
  std::int64_t wall_ns = 0;
  std::array<std::int64_t, kCategoryCount> ns{};  // sums to wall_ns
  std::size_t reactions = 0;
  std::size_t tags = 0;  // distinct tags it ran reactions at
};

struct SlowTag {
  Tag tag;
  std::int64_t wall_ns = 0;
  std::vector<std::string> chain;  // the critical path, latest link first
};

struct TraceSummary {
  std::vector<FederateTime> federates;  // in the order of the files, then threads
  std::vector<SlowTag> slowest;
  std::size_t tags = 0;            // distinct tags with events
  std::int64_t median_tag_ns = 0;  // over those tags
  Tag first_tag = Tag::forever();
  std::uint64_t dropped = 0;

  /// The summary as a fixed-width table for people.
  [[nodiscard]] std::string table() const;
  /// The per-federate split as an SVG document.
  [[nodiscard]] std::string svg(const std::string& title) const;
};

[[nodiscard]] TraceSummary summarize_trace(const std::vector<ProcessTraceFile>& files,
                                           std::size_t top = 5);

}  // namespace tagflow::tracing
