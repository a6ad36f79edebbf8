// Actor-mode checkpoints (docs/recovery.md): each node actor writes its own state, uncoordinated,
// every `checkpoint.every` of wall time, and a restarted process starts each of its replicas from
// that replica's newest one.
//
// There is no logical time in actor mode, so no agreed cut: a replica's checkpoint holds its state
// as of one moment of its own — between two of its messages, since an actor handles one at a
// time (the checkpoint is a message to itself) — and nothing of what its peers held for it then.
//
// Files, in the run's checkpoint directory (LOG_DIR/checkpoints/):
//   <replica>.ckpt   a state file (common/state_stream.hpp: magic, length, checksum), written
//                    atomically: layout version, replica name, kind, the replica's count at the
//                    checkpoint (env steps, inserts, updates, rows), the wall time it was written
//                    (Unix ns), its sequence number (1, 2, ... over the run, across restarts), and
//                    the kind's state (the same server state the reactor bindings save);
//   <replica>.table  a replay's table (ReplayServer::checkpoint_to), written atomically before the
//                    .ckpt: a crash between the two leaves a table one checkpoint newer than the
//                    .ckpt, which restores that newer table (the replay loses less).
// Each replica keeps its newest checkpoint only (`checkpoint.keep` is for reactor mode): the
// rename that replaces it leaves the previous one whole until the new one is.
//
// Errors: read_actor_checkpoint() throws StateError naming the file and the reason (truncated,
// corrupt, another replica's); a missing file is nullopt. Thread-safety: free functions; one
// writer per file.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace tagflow::nodes {

struct ActorCheckpointFile {
  std::string replica;
  std::string kind;
  std::int64_t count = 0;            // the replica's count when it was written
  std::int64_t written_unix_ns = 0;  // system clock
  std::uint64_t sequence = 0;        // 1 for the replica's first checkpoint of the run
  std::string state;                 // the kind's state (its actor's save_state)
};

/// What a node actor does about checkpoints and lost peers (every actor kind's options hold one).
struct ActorRecovery {
  /// `<checkpoint dir>/<replica>`: the actor writes `.ckpt` (and a replay `.table`) there every
  /// `every`; empty: no checkpoints.
  std::string checkpoint_prefix;
  std::chrono::milliseconds every{0};
  /// Start from this checkpoint (read by the host before spawning), or from scratch.
  std::shared_ptr<const ActorCheckpointFile> restore;
  /// The launcher restarts dead processes: a replay, learner or inference peer that goes down is
  /// forgotten and the actor waits for it to come back, instead of ending the run.
  bool peers_return = false;
};

/// `<prefix>.ckpt`.
[[nodiscard]] std::string actor_checkpoint_path(const std::string& prefix);

/// Writes `file` to `path` atomically.
void write_actor_checkpoint(const std::string& path, const ActorCheckpointFile& file);

/// The checkpoint at `path`; nullopt when there is none. Throws StateError (named) for a file
/// that is there but cannot be used, or holds another replica than `replica`.
[[nodiscard]] std::optional<ActorCheckpointFile> read_actor_checkpoint(const std::string& path,
                                                                       const std::string& replica);

}  // namespace tagflow::nodes
