// Table: a replay table of transitions with FIFO eviction, a selector, a rate limiter and
// checkpoints. The pure core that the replay server node wraps; it knows nothing of sockets.
//
// Contract
//   - Capacity: at most max_items items and, when max_bytes > 0, at most max_bytes bytes of
//     stored data (observation frames plus per-item fields). Inserting into a full table evicts
//     the oldest items first (FIFO), whatever the selector.
//   - Keys: insert returns a key; keys increase in insertion order and are never reused. Priority
//     updates for keys already evicted (or never issued) are ignored and not counted.
//   - Priorities: finite and ≥ 0, else std::invalid_argument. A priority-0 item is never
//     sampled by the prioritized selector.
//   - Lazy writing (PAL): an insert reserves its slot under the table's mutex, copies the
//     transition's bytes with no lock held, then commits under the mutex. A commit and a priority
//     update do not touch the selector: they are queued, and a queue of kLazyBatch writes (or any
//     queue when a sample, an eviction, info() or a checkpoint needs the selector current) is
//     applied at once under the exclusive side of the tree lock, the sum tree's sums propagated
//     once per batch, exactly (the tree equals one built from scratch). A sample therefore sees
//     every write made before it, never a half-applied batch, and the table samples exactly what
//     it would with every write applied at once (same keys, same digest).
//   - Parallel sampling: a sample takes the mutex only to pass the rate limiter and draw its
//     random numbers (so which items it gets does not depend on thread timing), then descends
//     the tree and copies the items under the shared side of the tree lock, with the mutex
//     released: samplers run in parallel with each other and with the lock-free part of inserts.
//     Writers of the tree (a lazy batch, an eviction) wait for the samplers inside; new samplers
//     wait for a waiting writer (WriterPriorityMutex). sample_many() draws several batches under
//     one admission and lets the caller resolve them on its own threads.
//   - Waiting: insert() and sample() block until the rate limiter allows them, the timeout
//     passes (kTimedOut) or close() is called (kClosed). try_insert()/try_sample() never wait.
//     close() wakes every waiter; calls after close() return kClosed. The destructor closes;
//     destroying a table while other threads still call it is a programmer error.
//   - Checkpoints: save_checkpoint() writes every committed item, its priority, its key and the
//     rate limiter counters to `path` atomically (temporary file in the same directory, fsync,
//     rename); its bytes are written in pieces of about 1 MiB while holding the mutex (inserts
//     and samples wait meanwhile), never copied whole in memory; write_checkpoint() hands the
//     same pieces to a caller that completes the file itself. load_checkpoint()
//     rebuilds an identical table; priorities come back bit-exact. I/O errors and malformed
//     files throw std::runtime_error naming the path.
//
// Thread-safety: every public method may be called from any number of threads at once.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "rl/replay/frame_store.hpp"
#include "rl/replay/item.hpp"
#include "rl/replay/rate_limiter.hpp"
#include "rl/replay/replay_status.hpp"
#include "rl/replay/sampled_batch.hpp"
#include "rl/replay/selector.hpp"
#include "rl/replay/writer_priority_mutex.hpp"

namespace tagflow::replay {

/// Runs body(0) … body(count − 1), each exactly once, in any order and on any threads, and
/// returns when all have finished (sample_many). Table itself runs no threads.
using ParallelFor =
    std::function<void(std::size_t count, const std::function<void(std::size_t)>& body)>;

/// Deferred selector writes applied together (Table's lazy writing).
inline constexpr std::size_t kLazyBatch = 256;

/// Pass as a timeout to wait without limit.
inline constexpr std::chrono::milliseconds kWaitForever = std::chrono::milliseconds::max();

struct TableConfig {
  std::string name = "replay";
  TransitionSpec spec;
  std::size_t max_items = 1 << 20;
  /// 0: no byte limit.
  std::size_t max_bytes = 0;
  SelectorKind selector = SelectorKind::kUniform;
  /// α: the prioritized selector samples item i with probability p_i^α / Σ p^α.
  double priority_exponent = 0.6;
  /// Prioritized selector over the textbook binary sum tree instead of the K-ary one: the
  /// baseline of end-to-end comparisons. Not saved in checkpoints (a loaded table is K-ary).
  bool binary_sum_tree = false;
  RateLimiterConfig rate_limiter;
  std::uint64_t seed = 1;
};

/// A snapshot of a table's counters.
struct TableInfo {
  std::size_t size = 0;       // committed items
  std::size_t bytes = 0;      // stored bytes (frames + per-item fields)
  std::uint64_t inserts = 0;  // items ever inserted (rate limiter counter)
  std::uint64_t sampled_items = 0;
  std::uint64_t evictions = 0;
  std::uint64_t next_key = 0;
  std::size_t frames = 0;           // observation frames stored
  std::uint64_t shared_frames = 0;  // observations stored once for two uses (TableWriter)
  double total_priority = 0.0;      // Σ p^α (prioritized selector only)
};

class TableWriter;

/// The most items a table holds (TableConfig::max_items): 2^30.
inline constexpr std::size_t kMaxTableItems = std::size_t{1} << 30U;

class Table {
 public:
  /// Throws std::invalid_argument on an invalid config (max_items 0 or above 2^30, negative α,
  /// rate limiter errors, a byte limit too small for one item).
  explicit Table(TableConfig config);
  ~Table();
  Table(const Table&) = delete;
  Table& operator=(const Table&) = delete;

  [[nodiscard]] const TableConfig& config() const { return config_; }

  /// Inserts one transition with `priority`; writes its key to `*key` when non-null.
  [[nodiscard]] ReplayStatus insert(const Transition& transition, double priority,
                                    std::chrono::milliseconds timeout = kWaitForever,
                                    ItemKey* key = nullptr);
  [[nodiscard]] ReplayStatus try_insert(const Transition& transition, double priority,
                                        ItemKey* key = nullptr);

  /// Draws request.batch_size items (with replacement) into `out`.
  [[nodiscard]] ReplayStatus sample(const SampleRequest& request, SampledBatch& out,
                                    std::chrono::milliseconds timeout = kWaitForever);
  [[nodiscard]] ReplayStatus try_sample(const SampleRequest& request, SampledBatch& out);
  /// Up to `out.size()` batches with no waiting: admits batches one by one in order while the
  /// rate limiter allows (as that many try_sample calls would, with the same items), then
  /// resolves and copies them through `parallel_for` (nullptr: one after the other on this
  /// thread). Returns how many were filled (out[0 .. n)); 0 when the limiter allows none or the
  /// table is closed. Which items each batch holds does not depend on `parallel_for`.
  std::size_t sample_many(const SampleRequest& request, std::vector<SampledBatch>& out,
                          const ParallelFor& parallel_for = nullptr);

  /// Sets the priority of each live key (keys[i] gets priorities[i]); ignores evicted or unknown
  /// keys. Returns the number applied. Throws std::invalid_argument on a size mismatch or an
  /// invalid priority (nothing is applied then).
  std::size_t update_priorities(const std::vector<ItemKey>& keys,
                                const std::vector<double>& priorities);

  /// Wakes and fails every waiting call; later calls return kClosed. Idempotent.
  void close();
  [[nodiscard]] bool closed() const;
  [[nodiscard]] std::size_t size() const;
  [[nodiscard]] TableInfo info() const;
  /// The current priority of a live item, or a negative value when `key` is not live.
  [[nodiscard]] double priority(ItemKey key) const;

  void save_checkpoint(const std::string& path) const;
  /// The bytes save_checkpoint() writes, handed to `out` in order, in pieces of about 1 MiB: for
  /// a caller that adds its own bytes and completes the file itself (nodes/replay/replay_server).
  /// Returns how many bytes it handed. What `out` throws propagates, the table unchanged.
  std::uint64_t write_checkpoint(const std::function<void(std::string_view)>& out) const;
  [[nodiscard]] static std::unique_ptr<Table> load_checkpoint(const std::string& path);

 private:
  friend class TableWriter;
  friend class TableCheckpoint;

  enum class SlotState : std::uint8_t { kEmpty, kWriting, kReady };
  struct Slot {
    ItemKey key = 0;
    SlotState state = SlotState::kEmpty;
    // A later live item uses this item's next_observation frame as its observation.
    bool next_shared = false;
    std::uint8_t done = 0;
    float reward = 0.0F;
    FrameId observation = kNoFrame;
    FrameId next_observation = kNoFrame;
    double priority = 0.0;
  };
  // The part of a TableWriter the table reads and updates under mutex_.
  struct Stream {
    FrameId frame = kNoFrame;  // held reference: the last next_observation stored
    ItemKey key = 0;           // the item that stored it
  };

  ReplayStatus insert_impl(const Transition& transition, double priority,
                           std::chrono::milliseconds timeout, bool wait, ItemKey* key,
                           Stream* stream);
  ReplayStatus sample_impl(const SampleRequest& request, SampledBatch& out,
                           std::chrono::milliseconds timeout, bool wait);
  // Under mutex_: whether the limiter and the selector (made current) allow a sample now.
  [[nodiscard]] bool can_sample_now() const;
  // Under mutex_: draws one batch into `selection`, sizes `out` and records the sample.
  void admit_sample(const SampleRequest& request, Selection& selection, SampledBatch& out);
  // Under the shared tree lock: resolves `selection` and copies the items into `out`.
  void fill_sample(Selection& selection, SampledBatch& out) const;
  // Under the shared tree lock, for a filled batch: counts the draws in times_sampled.
  void count_samples(SampledBatch& out) const;
  // Under mutex_: applies the queued selector writes, under the exclusive tree lock.
  void flush_pending() const;
  // Under mutex_ and the exclusive tree lock.
  void apply_pending() const;
  void queue_write(std::size_t slot, double priority, bool insert);
  template <class Ready>
  bool wait_until(std::unique_lock<std::mutex>& lock, std::chrono::milliseconds timeout, bool wait,
                  Ready ready) const;
  void validate(const Transition& transition) const;
  // Whether evicting committed items (oldest first) can make room for one more item of
  // `new_bytes` without waiting for an item still being written.
  [[nodiscard]] bool room_ready(std::size_t new_bytes) const;
  void make_room(std::size_t new_bytes);
  void evict_oldest();
  [[nodiscard]] std::size_t freed_bytes(const Slot& slot) const;
  [[nodiscard]] bool live(ItemKey key) const;
  void release_stream(Stream& stream);
  [[nodiscard]] std::size_t slot_of(ItemKey key) const { return key % config_.max_items; }

  const TableConfig config_;
  const std::size_t observation_bytes_;
  const std::size_t action_bytes_;
  const std::size_t item_bytes_;  // per-item fields, frames excluded

  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;  // any state a waiter checks changed
  bool closed_ = false;                      // guarded by mutex_
  mutable int checkpointing_ = 0;            // guarded by mutex_: saves running; no new inserts
  // Tree lock, taken after mutex_ (never the other way round): the selector and the slots of
  // items in it change under mutex_ + exclusive; samplers read them under the shared side.
  mutable WriterPriorityMutex tree_mutex_;
  // guarded by mutex_ + tree_mutex_ (see above). Mutable: lazy writing lets const readers apply
  // the queued writes first, which changes nothing they can observe.
  mutable std::vector<Slot> slots_;
  // Per slot; samplers under the shared tree lock increment them concurrently.
  std::unique_ptr<std::atomic<std::uint32_t>[]> times_sampled_;
  // Slot-major action rows. A row is written by its inserter, without the lock, while its slot
  // is kWriting; read under mutex_ once kReady.
  std::vector<std::uint8_t> actions_;
  FrameStore frames_;                   // bookkeeping guarded by mutex_; bytes see frame_store.hpp
  std::unique_ptr<Selector> selector_;  // guarded by mutex_ + tree_mutex_ (see slots_)
  mutable std::vector<SelectorWrite> pending_;  // guarded by mutex_: queued lazy writes
  RateLimiter limiter_;                         // guarded by mutex_
  ReplayRng rng_;                               // guarded by mutex_
  ItemKey oldest_key_ = 0;           // guarded by mutex_: keys [oldest_key_, next_key_) live
  ItemKey next_key_ = 0;             // guarded by mutex_
  std::size_t committed_ = 0;        // guarded by mutex_: live items in state kReady
  std::size_t bytes_ = 0;            // guarded by mutex_
  std::uint64_t evictions_ = 0;      // guarded by mutex_
  std::uint64_t shared_frames_ = 0;  // guarded by mutex_
};

// Waits on changed_ until ready() holds (true) or the timeout passes (false); `wait` false: no
// waiting at all.
template <class Ready>
inline bool Table::wait_until(std::unique_lock<std::mutex>& lock, std::chrono::milliseconds timeout,
                              bool wait, Ready ready) const {
  if (ready()) return true;
  if (!wait) return false;
  if (timeout == kWaitForever) {
    changed_.wait(lock, ready);
    return true;
  }
  return changed_.wait_for(lock, timeout, ready);
}

}  // namespace tagflow::replay
