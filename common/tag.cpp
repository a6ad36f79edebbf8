#include "common/tag.hpp"

#include <cinttypes>
#include <cstdio>

namespace tagflow {

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

}  // namespace tagflow
