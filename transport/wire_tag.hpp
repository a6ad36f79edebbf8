// WireTag: a logical tag as it travels on the wire and through the coordinator.
//
// A tag is (time in nanoseconds, microstep), ordered lexicographically. It is a plain value type,
// mirroring the reactor runtime's tag so that transport/ and coordinator/ need not depend on
// reactors/. kForever is the tag a federate reports when it has no more events; kNever precedes
// every tag. Connection delays are applied with `delayed`: no delay keeps the tag, `after 0` adds
// one microstep, `after d` (d > 0) gives (time + d, 0), saturating at kForever.
// Thread-safety: a value; all functions are pure.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <ostream>
#include <tuple>

namespace tagflow::transport {

struct WireTag {
  std::int64_t time_ns = 0;
  std::uint32_t microstep = 0;

  friend bool operator==(const WireTag& a, const WireTag& b) {
    return a.time_ns == b.time_ns && a.microstep == b.microstep;
  }
  friend bool operator!=(const WireTag& a, const WireTag& b) { return !(a == b); }
  friend bool operator<(const WireTag& a, const WireTag& b) {
    return std::tie(a.time_ns, a.microstep) < std::tie(b.time_ns, b.microstep);
  }
  friend bool operator>(const WireTag& a, const WireTag& b) { return b < a; }
  friend bool operator<=(const WireTag& a, const WireTag& b) { return !(b < a); }
  friend bool operator>=(const WireTag& a, const WireTag& b) { return !(a < b); }
  friend std::ostream& operator<<(std::ostream& out, const WireTag& tag) {
    return out << "(" << tag.time_ns << ", " << tag.microstep << ")";
  }
};

inline constexpr WireTag kNever{std::numeric_limits<std::int64_t>::min(), 0};
inline constexpr WireTag kForever{std::numeric_limits<std::int64_t>::max(),
                                  std::numeric_limits<std::uint32_t>::max()};

/// The tag right after `tag` (next microstep); kForever stays kForever.
inline WireTag next_microstep(const WireTag& tag) {
  if (tag == kForever) return kForever;
  if (tag.microstep == std::numeric_limits<std::uint32_t>::max()) return {tag.time_ns + 1, 0};
  return {tag.time_ns, tag.microstep + 1};
}

/// The latest tag strictly before `tag`; kNever stays kNever.
inline WireTag previous_tag(const WireTag& tag) {
  if (tag == kNever || tag == kForever) return tag;
  if (tag.microstep > 0) return {tag.time_ns, tag.microstep - 1};
  return {tag.time_ns - 1, std::numeric_limits<std::uint32_t>::max()};
}

/// A connection delay: std::nullopt means none (same tag); a value d >= 0 means `after d`.
using ConnectionDelay = std::optional<std::int64_t>;

/// The tag at which a message sent at `tag` over a connection with `delay` arrives.
inline WireTag delayed(const WireTag& tag, const ConnectionDelay& delay) {
  if (!delay.has_value()) return tag;
  if (tag == kForever || tag == kNever) return tag;
  if (*delay == 0) return next_microstep(tag);
  if (tag.time_ns > std::numeric_limits<std::int64_t>::max() - *delay) return kForever;
  return {tag.time_ns + *delay, 0};
}

}  // namespace tagflow::transport
