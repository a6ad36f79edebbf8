#include "reactors/tag.hpp"

#include <cinttypes>
#include <cstdio>

namespace tagflow::reactors {

Tag Tag::delayed(Duration delay) const {
  if (is_forever()) return *this;
  const std::int64_t d = delay.count() > 0 ? delay.count() : 0;
  if (d == 0) {
    if (microstep_ == std::numeric_limits<std::uint32_t>::max()) return Tag(time_ns_ + 1, 0);
    return Tag(time_ns_, microstep_ + 1);
  }
  if (time_ns_ > std::numeric_limits<std::int64_t>::max() - d) return forever();
  return Tag(time_ns_ + d, 0);
}

Tag Tag::predecessor() const {
  if (is_never()) return *this;
  if (microstep_ > 0) return Tag(time_ns_, microstep_ - 1);
  return Tag(time_ns_ - 1, std::numeric_limits<std::uint32_t>::max());
}

std::string Tag::to_string(std::int64_t origin_ns) const {
  if (is_never()) return "(never)";
  if (is_forever()) return "(forever)";
  const std::int64_t t = time_ns_ - origin_ns;
  const std::int64_t magnitude = t < 0 ? -t : t;
  char buffer[80];
  std::snprintf(buffer, sizeof(buffer), "(t=%s%" PRId64 ".%09" PRId64 "s, m=%" PRIu32 ")",
                t < 0 ? "-" : "", magnitude / 1000000000, magnitude % 1000000000, microstep_);
  return buffer;
}

std::int64_t physical_time_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace tagflow::reactors
