// summarize_trace(): where a traced run's time went (tracing/README.md, "tagflow trace
// summary"), from the per-process files (trace_files.hpp).
//
// Per federate (the coordinator as one more row; in actor mode one row per process): its wall
// time, from its first recorded event to its last, split into computing (reactions, or handlers),
// messaging (sending and taking data messages), waiting for data (a granted tag whose counted
// messages had not all arrived, or nothing to run until a message comes), waiting for a grant,
// waiting for physical time, and the rest. Where spans overlap (a message taken while the
// scheduler waits, a network thread sending while the worker computes) each instant counts once,
// for the first of those in that order, so the parts add up to the wall time.
//
// The slowest tags: per logical tag, the wall time from the first reaction or data message at it
// to the last, over every federate. For each of the slowest, its critical path, walked back in
// time from the event that ended the tag, one link per federate:
//   - what the federate ran (its reactions since its last wait: their span and the longest);
//   - the wait before them: the last wait that ended, with the waits right before it that no
//     reaction separates (a grant, then data) as one waiting period;
//   - what ended it: the last message the federate took during the wait (data, or a control
//     message with a tag: TAG, PTAG, an upstream's COMPLETED), and its send (same sender,
//     receiver and port or name, and tag);
//   - if that message was sent while the federate waited, the walk goes on at its sender, up to
//     the send (the coordinator: a link naming the control message it took last before it
//     granted, and on to that message's sender); if it was sent before the wait began, the
//     federate came late and the walk goes on with its own work before the wait.
// The walk ends at a federate that did not wait since the tag's first event, a wait for
// physical time, a wait during which nothing was taken, a message whose send is not in the
// trace, or after 16 links. Times are milliseconds from the tag's first event ("+1.250 ms").
//
// TraceSummary::table() is the summary for people, TraceSummary::svg() the per-federate split as a
// stacked bar chart (an SVG document, no dependency). Thread-safety: pure functions and values.
#pragma once

#include <array>
#include <cstddef>
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

  /// The category's share of the wall time, in percent (0 for a row without wall time).
  [[nodiscard]] double percent(TimeCategory category) const;
};

struct SlowTag {
  Tag tag;
  std::int64_t wall_ns = 0;
  std::vector<std::string> chain;  // the critical path, latest link first
};

struct TraceSummary {
  std::vector<FederateTime> federates;  // in the order of the files, then threads
  std::vector<SlowTag> slowest;         // slowest first
  std::size_t tags = 0;                 // distinct tags with reactions or data messages
  std::int64_t median_tag_ns = 0;       // over those tags
  Tag first_tag = Tag::forever();
  std::uint64_t dropped = 0;

  /// The summary as fixed-width text for people (what `tagflow trace summary` prints).
  [[nodiscard]] std::string table() const;
  /// The per-federate split as an SVG document titled `title`.
  [[nodiscard]] std::string svg(const std::string& title) const;
};

/// The summary of a run's files, explaining the `top` slowest tags.
[[nodiscard]] TraceSummary summarize_trace(const std::vector<ProcessTraceFile>& files,
                                           std::size_t top = 5);

}  // namespace tagflow::tracing
