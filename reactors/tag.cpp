#include "reactors/tag.hpp"

namespace tagflow::reactors {

std::int64_t physical_time_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace tagflow::reactors
