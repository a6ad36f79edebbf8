// Checkpoints of a learner's state (LearnerState) on disk, written atomically.
//
// save_checkpoint writes to a temporary file in the same directory, flushes it to disk
// (fsync), then renames it over `path`, so a crash leaves either the old checkpoint or the new
// one, never a torn file. The format is a fixed header (magic "TFCK", format, sizes, counters),
// the network name, the four float vectors, and a trailing checksum over everything before it.
//
// Errors: LearnerStateError with the path and the reason (I/O failure, not a checkpoint,
// truncated, checksum mismatch). Not synchronized: one writer per path.
#pragma once

#include <string>

#include "rl/learning/learner_state.hpp"

namespace tagflow::learning {

/// Writes `state` to `path` atomically. Throws LearnerStateError.
void save_checkpoint(const LearnerState& state, const std::string& path);

/// Reads a checkpoint written by save_checkpoint. Throws LearnerStateError.
[[nodiscard]] LearnerState load_checkpoint(const std::string& path);

}  // namespace tagflow::learning
