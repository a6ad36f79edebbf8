// ReplayServer: the replay node's logic — one replay table (rl/replay) fed by transition
// batches, sampled into minibatches by a count-based rate limiter, updated with priorities.
// No threads, no sockets, no clock: a binding calls insert() / due_batches() / update().
//
// Rate limit (counts only, so a run is deterministic): nothing is sampled before the table
// holds min_size items; from then on every inserted transition earns samples_per_insert sample
// credits, and due_batches() returns as many batch_size minibatches as the credits pay for
// (at most max_batches_per_call; the rest stays owed for the next call).
//
// Checkpoints (params checkpoint_dir, checkpoint_every, restore): checkpoint() writes the whole
// server — every item with its priority and key, the table's random generator, the credits and
// counters — to `<checkpoint_dir>/<replica>.ckpt`, atomically (the new file is written beside
// it, flushed, then renamed over the old one), so a reader sees the previous checkpoint or the
// new one, never a mix. With checkpoint_every N > 0, insert() checkpoints after the batch that
// completes N inserts since the last one; the bindings also call checkpoint() at stop. With
// restore: true the constructor loads `<checkpoint_dir>/<replica>.ckpt` when it exists, and the
// restored server samples exactly what the checkpointed one would have sampled next.
// File layout: the table's own checkpoint (rl/replay/table_checkpoint.cpp) followed by a
// 64-byte footer: "TFRSERVR", u32 version, u64 table bytes, u64 FNV-1a hash of those bytes,
// u64 inserts, u64 batches, f64 credits, u32 observation size, "TFRSVEND".
//
// Observations are stored in the element type they arrive in: float32 rows, or uint8 pixel
// frames kept as bytes (a quarter of the memory of the same frames as float32); the table's
// dtype is fixed by the first insert and recorded in its checkpoint.
//
// Errors: ParamError for a bad param (naming it); std::invalid_argument for transitions whose
// observation size or type does not match the first ones; CheckpointError (with the path) when a
// checkpoint cannot be written or read — a truncated, corrupt or foreign file, or one written
// with another capacity/selector/priority_exponent. Not thread-safe (the table is, but the
// credit counters are not): one caller at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/state_stream.hpp"
#include "nodes/messages.hpp"
#include "nodes/node_params.hpp"
#include "rl/replay/table.hpp"

namespace tagflow::nodes {

class CheckpointError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ReplayConfig {
  std::size_t capacity = 50000;
  bool prioritized = false;  // params selector: uniform | prioritized
  double priority_exponent = 0.6;
  double importance_beta = 0.4;
  std::size_t min_size = 1000;
  double samples_per_insert = 8.0;
  std::size_t batch_size = 64;
  std::size_t max_batches_per_call = 4;
  /// Threads (the binding's own included) that resolve one call's minibatches at once; the
  /// minibatches do not depend on it (params sample_threads; used by the reactor binding).
  std::size_t sample_threads = 1;
  std::uint64_t seed = 1;
  /// Where checkpoints go (relative to the working directory); empty: no checkpoints.
  std::string checkpoint_dir;
  /// Inserts between automatic checkpoints; 0: only on request and at stop.
  std::uint64_t checkpoint_every = 0;
  /// Load `<checkpoint_dir>/<replica>.ckpt` at construction when it exists.
  bool restore = false;

  /// Reads capacity, selector, priority_exponent, importance_beta, min_size,
  /// samples_per_insert, batch_size, max_batches_per_call, sample_threads, checkpoint_dir,
  /// checkpoint_every, restore (checkpoint_every and restore need checkpoint_dir).
  static ReplayConfig from_params(const NodeParams& params, std::uint64_t seed);
};

/// `<checkpoint_dir>/<replica>.ckpt`: where replica `replica` checkpoints ("" without a dir).
[[nodiscard]] std::string replay_checkpoint_path(const std::string& checkpoint_dir,
                                                 const std::string& replica);

class ReplayServer {
 public:
  /// The table is created on the first insert, when the observation size is known — or loaded
  /// from the replica's checkpoint when config.restore is set and the file exists (throws
  /// CheckpointError when that file is unreadable or does not fit the config).
  explicit ReplayServer(const ReplayConfig& config, std::string replica = "replay");
  ~ReplayServer();
  ReplayServer(const ReplayServer&) = delete;
  ReplayServer& operator=(const ReplayServer&) = delete;

  /// Inserts every row; then checkpoints when checkpoint_every inserts have passed (a failed
  /// automatic checkpoint does not throw: see last_checkpoint_error()).
  void insert(const TransitionsMessage& transitions);
  /// The minibatches the rate limiter allows now (possibly none), drawn under one admission of
  /// the table and resolved through the parallel_for set by the binding (if any).
  [[nodiscard]] std::vector<SampleBatchMessage> due_batches();
  /// How due_batches() resolves several minibatches (the binding's threads); empty: in turn.
  void set_parallel_for(replay::ParallelFor parallel_for) {
    parallel_for_ = std::move(parallel_for);
  }
  /// New priorities for sampled keys (prioritized tables; keys evicted since are ignored).
  void update(const PriorityUpdateMessage& update);

  /// Writes the checkpoint to checkpoint_path() and returns that path; std::nullopt when
  /// nothing was inserted yet (there is no table to save). Throws CheckpointError when no
  /// checkpoint_dir is configured or the file cannot be written.
  std::optional<std::string> checkpoint();
  /// The checkpoint every binding writes when the run stops (nothing without checkpoint_dir).
  /// Never throws: returns what failed — this checkpoint, or the last automatic one — or "".
  [[nodiscard]] std::string checkpoint_at_stop();
  /// Writes the checkpoint to `path` (same contract, any path), streamed into a temporary file
  /// beside it, then sealed, synced and renamed: the table is never copied whole in memory.
  std::optional<std::string> checkpoint_to(const std::string& path);
  /// True once something was inserted: there is a table to checkpoint.
  [[nodiscard]] bool has_table() const { return table_ != nullptr; }
  /// The bytes checkpoint_to() writes, handed to `out` in pieces as they are produced (about
  /// 1 MiB each), not yet sealed; requires has_table(). Counts no checkpoint as written.
  void write_checkpoint(const ByteSink& out) const;
  /// Completes a file holding write_checkpoint()'s bytes: the footer's hash over the
  /// table's bytes, read back in pieces — the CPU-heavy part (FNV-1a: a multiply per byte), which
  /// needs nothing of the server, so any thread may.
  static void seal_checkpoint(AtomicFile& file);
  /// Replaces the contents and counters with those of the checkpoint at `path`. Throws
  /// CheckpointError (the server is unchanged then).
  void restore_from(const std::string& path);
  /// `<checkpoint_dir>/<replica>.ckpt`, or empty without checkpoint_dir.
  [[nodiscard]] std::string checkpoint_path() const;

  [[nodiscard]] const ReplayConfig& config() const { return config_; }
  [[nodiscard]] std::size_t size() const;
  /// The element type of the stored observations (set by the first insert or a restore).
  [[nodiscard]] ObservationType observation_type() const { return observation_type_; }
  /// Bytes the table stores (frames and per-item fields), as replay::TableInfo::bytes.
  [[nodiscard]] std::size_t stored_bytes() const;
  [[nodiscard]] std::uint64_t inserts() const { return inserts_; }
  [[nodiscard]] std::uint64_t batches_sampled() const { return batches_; }
  [[nodiscard]] double credits() const { return credits_; }
  [[nodiscard]] std::uint64_t checkpoints_written() const { return checkpoints_written_; }
  /// The error of the latest failed automatic checkpoint (empty when none failed).
  [[nodiscard]] const std::string& last_checkpoint_error() const { return checkpoint_error_; }

 private:
  void create_table(std::uint32_t observation_size, ObservationType type);

  ReplayConfig config_;
  std::string replica_;
  std::unique_ptr<replay::Table> table_;
  std::uint32_t observation_size_ = 0;
  ObservationType observation_type_ = ObservationType::kFloat32;
  std::uint64_t inserts_ = 0;
  std::uint64_t batches_ = 0;
  double credits_ = 0.0;
  std::uint64_t last_checkpoint_inserts_ = 0;
  std::uint64_t checkpoints_written_ = 0;
  std::string checkpoint_error_;
  replay::ParallelFor parallel_for_;
  std::vector<replay::SampledBatch> sampled_;  // reused by due_batches
};

}  // namespace tagflow::nodes
