#include "rl/replay/replay_status.hpp"

namespace tagflow::replay {

const char* to_string(ReplayStatus status) {
  switch (status) {
    case ReplayStatus::kOk:
      return "ok";
    case ReplayStatus::kTimedOut:
      return "timed out";
    case ReplayStatus::kClosed:
      return "closed";
  }
  return "unknown";
}

}  // namespace tagflow::replay
