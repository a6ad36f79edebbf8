// Tag: the logical time of an event, (time in nanoseconds, microstep), ordered lexicographically.
//
// Contract: a plain value type (copyable, trivially destructible, thread-safe to copy). Tags only
// move forward: the scheduler never processes a tag below one it has already completed, and every
// delay is non-negative. `delayed(0)` is the next microstep at the same time ("after 0"), while
// `delayed(d > 0)` is (time + d, 0). Arithmetic saturates at Tag::forever() instead of wrapping.
// Physical time is wall-clock nanoseconds since the Unix epoch, so that federates on different
// hosts share one time base (subject to clock error).
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <string>

namespace tagflow::reactors {

using Duration = std::chrono::nanoseconds;

class Tag {
 public:
  constexpr Tag() = default;
  constexpr Tag(std::int64_t time_ns, std::uint32_t microstep)
      : time_ns_(time_ns), microstep_(microstep) {}

  /// Before every other tag; the "no tag yet" value.
  static constexpr Tag never() { return Tag(std::numeric_limits<std::int64_t>::min(), 0); }
  /// After every other tag; the "no event" value.
  static constexpr Tag forever() {
    return Tag(std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::uint32_t>::max());
  }

  [[nodiscard]] constexpr std::int64_t time_ns() const { return time_ns_; }
  [[nodiscard]] constexpr std::uint32_t microstep() const { return microstep_; }
  [[nodiscard]] constexpr bool is_never() const { return *this == never(); }
  [[nodiscard]] constexpr bool is_forever() const { return *this == forever(); }

  /// The tag `delay` after this one: the next microstep for a zero delay, (time + delay, 0)
  /// otherwise. Saturates at forever(); a negative delay is a programmer error (treated as 0).
  [[nodiscard]] Tag delayed(Duration delay) const;
  /// (time, microstep + 1).
  [[nodiscard]] Tag next_microstep() const { return delayed(Duration::zero()); }
  /// The greatest tag strictly below this one (used to turn "tags < g" into "tags <= g'").
  [[nodiscard]] Tag predecessor() const;

  /// "(t=1.000000250s, m=3)" with time relative to `origin_ns` (the start time), or absolute
  /// when origin_ns is 0.
  [[nodiscard]] std::string to_string(std::int64_t origin_ns = 0) const;

  friend constexpr bool operator==(const Tag& a, const Tag& b) {
    return a.time_ns_ == b.time_ns_ && a.microstep_ == b.microstep_;
  }
  friend constexpr bool operator!=(const Tag& a, const Tag& b) { return !(a == b); }
  friend constexpr bool operator<(const Tag& a, const Tag& b) {
    return a.time_ns_ < b.time_ns_ || (a.time_ns_ == b.time_ns_ && a.microstep_ < b.microstep_);
  }
  friend constexpr bool operator>(const Tag& a, const Tag& b) { return b < a; }
  friend constexpr bool operator<=(const Tag& a, const Tag& b) { return !(b < a); }
  friend constexpr bool operator>=(const Tag& a, const Tag& b) { return !(a < b); }

 private:
  std::int64_t time_ns_ = 0;
  std::uint32_t microstep_ = 0;
};

/// Wall-clock nanoseconds since the Unix epoch (std::chrono::system_clock). Thread-safe.
[[nodiscard]] std::int64_t physical_time_ns();

}  // namespace tagflow::reactors
