// The reactor runtime's tags and clocks. Tag is the tree's one tag type (common/tag.hpp): the
// logical time of an event, (time in nanoseconds, microstep), ordered lexicographically.
//
// Contract: tags only move forward: the scheduler never processes a tag below one it has already
// completed, and every delay is non-negative. Physical time is wall-clock nanoseconds since the
// Unix epoch, so that federates on different hosts share one time base (subject to clock error).
#pragma once

#include <chrono>
#include <cstdint>

#include "common/tag.hpp"

namespace tagflow::reactors {

using Duration = std::chrono::nanoseconds;
using Tag = tagflow::Tag;

/// Wall-clock nanoseconds since the Unix epoch (std::chrono::system_clock). Thread-safe.
[[nodiscard]] std::int64_t physical_time_ns();

}  // namespace tagflow::reactors
