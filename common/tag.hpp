// Tag: the logical time of an event, (time in nanoseconds, microstep), ordered lexicographically.
// The one tag type of the tree: the reactor runtime names it reactors::Tag, the wire and the
// coordinator transport::WireTag (transport/wire_tag.hpp, which also holds the connection-delay
// rule; transport/ encodes a tag on the wire, WIRE.md).
//
// Contract: a plain value type (copyable, trivially destructible, thread-safe to copy; all
// functions are pure). never() precedes every tag ("no tag yet"); forever() follows every tag ("no
// event": the tag a federate reports when it has no more events). `delayed(0)` is the next
// microstep at the same time ("after 0"), while `delayed(d > 0)` is (time + d, 0). Arithmetic
// saturates at forever() instead of wrapping, and predecessor() stays at never() and forever().
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <ostream>
#include <string>

namespace tagflow {

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
  [[nodiscard]] constexpr Tag delayed(std::chrono::nanoseconds delay) const {
    if (is_forever()) return *this;
    const std::int64_t d = delay.count() > 0 ? delay.count() : 0;
    if (d == 0) {
      if (microstep_ == std::numeric_limits<std::uint32_t>::max()) return Tag(time_ns_ + 1, 0);
      return Tag(time_ns_, microstep_ + 1);
    }
    if (time_ns_ > std::numeric_limits<std::int64_t>::max() - d) return forever();
    return Tag(time_ns_ + d, 0);
  }
  /// (time, microstep + 1); forever() stays forever().
  [[nodiscard]] constexpr Tag next_microstep() const {
    return delayed(std::chrono::nanoseconds::zero());
  }
  /// The greatest tag strictly below this one (used to turn "tags < g" into "tags <= g'");
  /// never() and forever() stay as they are.
  [[nodiscard]] constexpr Tag predecessor() const {
    if (is_never() || is_forever()) return *this;
    if (microstep_ > 0) return Tag(time_ns_, microstep_ - 1);
    return Tag(time_ns_ - 1, std::numeric_limits<std::uint32_t>::max());
  }

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
  /// "(time_ns, microstep)", the raw fields (test failures, logs of the wire).
  friend std::ostream& operator<<(std::ostream& out, const Tag& tag) {
    return out << "(" << tag.time_ns_ << ", " << tag.microstep_ << ")";
  }

 private:
  std::int64_t time_ns_ = 0;
  std::uint32_t microstep_ = 0;
};

}  // namespace tagflow
