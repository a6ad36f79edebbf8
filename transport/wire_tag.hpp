// WireTag: a logical tag as it travels on the wire and through the coordinator. It is the tree's
// one tag type (common/tag.hpp: (time in nanoseconds, microstep), ordered lexicographically,
// saturating at forever), so transport/ and coordinator/ need not depend on reactors/; its encoding
// is in wire_header.cpp (WIRE.md). kForever is the tag a federate reports when it has no more
// events; kNever precedes every tag.
//
// Connection delays are applied with `delayed`: no delay keeps the tag, `after 0` adds one
// microstep, `after d` (d > 0) gives (time + d, 0), saturating at kForever; kNever (no tag yet)
// stays kNever. Thread-safety: values; all functions are pure.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "common/tag.hpp"

namespace tagflow::transport {

using WireTag = tagflow::Tag;

inline constexpr WireTag kNever = WireTag::never();
inline constexpr WireTag kForever = WireTag::forever();

/// A connection delay: std::nullopt means none (same tag); a value d >= 0 means `after d`.
using ConnectionDelay = std::optional<std::int64_t>;

/// The tag at which a message sent at `tag` over a connection with `delay` arrives.
inline WireTag delayed(const WireTag& tag, const ConnectionDelay& delay) {
  if (!delay.has_value() || tag.is_never()) return tag;
  return tag.delayed(std::chrono::nanoseconds(*delay));
}

}  // namespace tagflow::transport
