// ReplayStatus: the outcome of a table call that may wait (insert, sample).
#pragma once

namespace tagflow::replay {

/// kOk: done. kTimedOut: the rate limiter (or a full table whose oldest item is still being
/// written) did not allow the call before the timeout; `try_` calls return it at once instead of
/// waiting. kClosed: Table::close() was called; the call did nothing and every later call returns
/// kClosed too.
enum class ReplayStatus { kOk, kTimedOut, kClosed };

/// "ok", "timed out" or "closed".
[[nodiscard]] const char* to_string(ReplayStatus status);

}  // namespace tagflow::replay
