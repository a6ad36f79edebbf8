// Scheduler: runs an assembled reactor program tag by tag, level by level, on its workers.
//
// Levels are computed once at assembly. At each tag, the reactions triggered at one level may run
// in parallel; the level ends when an atomic completion counter reaches the number of reactions
// queued at it, and the worker that completes the last one advances to the next level or tag
// itself (there is no scheduler thread). Workers claim reactions with a compare-and-swap on one
// 64-bit state word (phase, level, next index); idle workers spin briefly, then park on a futex.
//
// Sharing a level costs more than running it: a store every other worker sees, their wake-up,
// claims on one contended word. So the advancing worker runs a level itself (inline, as in
// single-thread mode, nothing published) unless the level's work pays for sharing it: it holds
// two or more reactions and their estimated cost (per level, measured on a sample of inline runs,
// robust to a preempted sample, and re-measured now and then) reaches share_threshold_ns (100 µs by
// default; 0 shares every level of two or more reactions). Tags of small reactions thus run at
// single-thread speed with any number of workers, while wide levels of heavy reactions (a bank of
// env steps, a batch of inferences) are spread over the workers (the other workers' threads start
// when a level is first shared). Which worker runs a reaction never changes what it computes:
// reactions of one level are independent by construction.
//
// With one worker, run() executes the same schedule on the caller's thread (single-thread mode);
// a federation may then do its network work in that thread's waits (federation.hpp step 8).
// In fast mode logical time runs ahead of physical time; otherwise each tag waits until physical
// time reaches its time (real-time mode), waking early for physical actions.
//
// A reaction that throws does not end the process: the first exception is kept (failure()) and
// the run stops as with stop_without_grant(); Environment::run() then throws ReactionError
// naming the reaction. The other reactions of that tag still run; the next tag (microstep) is
// the stop tag, where the shutdown() reactions run, and no tag after it starts.
//
// Contract: created and configured by Environment; run() once. enqueue(), current_tag(),
// and sequence() are for reactions on worker threads.
// notify_external(), grant() and request_stop*() are thread-safe and lock-free.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/trace_recorder.hpp"
#include "reactors/atomic_tag.hpp"
#include "reactors/federation.hpp"
#include "reactors/parker.hpp"
#include "reactors/reaction.hpp"
#include "reactors/tag.hpp"

namespace tagflow::reactors {

class EventSource;
class LifecycleTrigger;

struct SchedulerOptions {
  unsigned workers = 1;
  std::int64_t share_threshold_ns = 100'000;  // see the header comment; 0: share every wide level
  bool fast = true;
  bool keepalive = false;
  Tag start_tag;
  Tag timeout_tag = Tag::forever();
  bool tag_barrier = false;
  Tag initial_grant = Tag::never();
  FederationHooks hooks;
};

class Scheduler {
 public:
  Scheduler();
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  /// Installs the assembled program: reactions per level, event sources (physical ones also in
  /// `physical`), the startup and shutdown triggers. Called once by Environment.
  void configure(const SchedulerOptions& options, std::vector<std::vector<Reaction*>> levels,
                 std::vector<EventSource*> sources, std::vector<EventSource*> physical,
                 std::vector<LifecycleTrigger*> startup, std::vector<LifecycleTrigger*> shutdown);
  /// Runs to completion; blocks the caller (which acts as worker 0).
  void run();
  /// Tracing; on the advancing thread only, from a federation hook (a federate whose socket
  /// owner is that thread, with one worker): from begin_data_wait() to end_data_wait() it waits
  /// for the data messages a grant at `tag` counts, and that is the traced wait (`wait_data` at
  /// `tag`); the scheduler's own waits are not traced meanwhile, so the thread's spans nest.
  /// Running a tag ends it too.
  void begin_data_wait(const Tag& tag);
  void end_data_wait();

  // ---- for reactions (worker threads), lock-free ----
  void enqueue(Reaction& reaction) noexcept {
    const std::uint64_t sequence = sequence_;
    // Queued already at this tag (a gather reaction is triggered once per input): a plain load,
    // not a locked exchange, answers that.
    if (reaction.queued_sequence_.load(std::memory_order_relaxed) == sequence) return;
    Level& level = levels_[reaction.level_];
    if (!concurrent_) {
      // No level is shared right now: only the calling (advancing) worker runs reactions, so
      // nothing else enqueues and no locked instruction is needed.
      reaction.queued_sequence_.store(sequence, std::memory_order_relaxed);
      const std::uint32_t slot = level.count.load(std::memory_order_relaxed);
      level.count.store(slot + 1, std::memory_order_relaxed);
      level.slots[slot] = &reaction;
      return;
    }
    if (reaction.queued_sequence_.exchange(sequence, std::memory_order_relaxed) == sequence) {
      return;
    }
    const std::uint32_t slot = level.count.fetch_add(1, std::memory_order_relaxed);
    level.slots[slot] = &reaction;
  }
  /// The reaction the calling thread is running, or nullptr outside a reaction body.
  [[nodiscard]] static const Reaction* running_reaction() noexcept;
  [[nodiscard]] Tag current_tag() const { return current_; }
  [[nodiscard]] std::uint64_t sequence() const { return sequence_; }
  [[nodiscard]] std::int64_t start_time_ns() const { return options_.start_tag.time_ns(); }
  // ---- any thread, lock-free ----
  /// Wakes the scheduler when it waits for external events (physical actions call this).
  void notify_external() { notify(); }
  void grant(Tag tag);
  /// Stops at the tag after the one running (or being waited for) when the scheduler next
  /// advances; with hooks.stop_requested set, calls it with that tag instead.
  void request_stop();
  /// Stops at `tag`, or at the next tag if `tag` has already started. The earliest request wins.
  /// Also ends the hold of a stop proposed to the federation (hooks.stop_requested): from the
  /// proposal on, no tag at or past the proposed one is processed until this is called.
  void request_stop_at(Tag tag);
  /// Stops at the tag after the one running without asking the federation and without waiting
  /// for a grant (the federation has failed or is being left).
  void stop_without_grant();
  [[nodiscard]] std::uint64_t late_events() const {
    return late_events_.load(std::memory_order_relaxed);
  }
  void count_late_event() { late_events_.fetch_add(1, std::memory_order_relaxed); }
  [[nodiscard]] bool running() const { return running_.load(std::memory_order_acquire); }
  /// True once run() has returned (physical actions refuse events from then on).
  [[nodiscard]] bool finished() const { return finished_.load(std::memory_order_acquire); }
  /// Completed tags, for tests and summaries (valid after run()).
  [[nodiscard]] std::uint64_t tags_processed() const { return sequence_; }
  /// The first exception a reaction threw, or null; with the reaction's full name. After run().
  [[nodiscard]] std::exception_ptr failure() const { return failure_; }
  [[nodiscard]] const std::string& failed_reaction() const { return failed_reaction_; }

 private:
  struct Level {
    std::unique_ptr<Reaction*[]> slots;
    std::atomic<std::uint32_t> count{0};
    // Owned by the advancing worker: the estimated cost of one reaction of this level (ns, the
    // smaller of the last two timed inline runs), the last sample, and how many times it ran.
    std::int64_t reaction_ns = 0;
    std::int64_t last_sample_ns = 0;
    std::uint32_t runs = 0;
  };
  void worker_loop();
  /// Tracing (common/trace_recorder.hpp): a reaction's span; the advancing worker's waits, one
  /// span per stretch of the same kind at the same tag.
  void trace_reaction(trace::TraceRecorder& tracer, Reaction& reaction, std::int64_t started_at);
  void trace_wait(trace::Kind kind, const Tag& tag);
  void end_traced_wait();
  /// Runs `reaction`'s body; an exception is kept (the first) and stops the run.
  void run_reaction(Reaction& reaction) noexcept;
  void wait_for_state_change(std::uint64_t seen);
  void run_single_threaded();
  /// Whether the level about to run with `count` reactions is worth publishing to the other
  /// workers rather than run by the advancing worker itself (see the header comment).
  [[nodiscard]] bool worth_sharing(Level& level, std::uint32_t count) const;
  /// Runs the level's reactions on the calling (advancing) worker; times a sample of runs.
  void run_inline(Level& level, std::uint32_t count);
  /// Called by the worker that completed the last reaction of the current level: publishes the
  /// next non-empty level, advancing tags as needed. Returns false when the run is over.
  bool publish_next_work();
  /// Moves to the next tag (waiting for grants or physical time as needed) and fires its events.
  void advance_tag();
  /// Tag complete: hooks, level reset. Returns false after the final tag.
  bool complete_tag();
  [[nodiscard]] Tag earliest_event();
  void apply_stop_requests();
  void publish_state(std::uint64_t phase, std::uint64_t level, bool wake);
  /// Wakes the advancing worker from its wait: the parker, and the federation's wait
  /// (hooks.wait) unless the notifier is that wait's own thread.
  void notify();
  /// Waits for a notification, at most timeout_ns (negative: no limit): in hooks.wait when set.
  void wait_external(std::uint32_t epoch, std::int64_t timeout_ns);
  /// hooks.poll(), marked as the federation's own thread (notify() then needs no hooks.wake()).
  void federation_poll();

  SchedulerOptions options_;
  std::unique_ptr<Level[]> levels_;
  std::size_t level_count_ = 0;
  std::vector<EventSource*> sources_;
  std::vector<EventSource*> physical_;
  std::vector<EventSource*> due_;
  std::vector<LifecycleTrigger*> startup_;
  std::vector<LifecycleTrigger*> shutdown_;
  std::vector<std::thread> threads_;

  // Owned by the advancing worker (handed over through state_'s release/acquire).
  Tag current_ = Tag::never();
  std::int64_t wait_since_ = 0;  // a traced wait in progress (the advancing worker's)
  trace::Kind wait_kind_ = trace::Kind::kWaitGrant;
  Tag wait_tag_;
  bool data_wait_ = false;  // begin_data_wait()'s span is the one in progress
  std::uint64_t sequence_ = 0;
  Tag stop_tag_ = Tag::forever();
  Tag last_announced_ = Tag::never();
  Tag earliest_ = Tag::forever();  // the tag of due_
  std::size_t next_level_ = 0;
  std::uint64_t phase_ = 0;
  bool shared_ = false;  // a level has been published since the workers were last parked idle
  bool in_tag_ = false;
  bool final_tag_ = false;
  bool started_ = false;
  bool local_stop_ = false;  // stop_tag_ was set locally: the final tag needs no grant
  bool stop_held_ = false;   // a stop was proposed to the federation: hold at hold_from_
  // hooks.wait is set and there is one worker (federation.hpp 8). Atomic: a physical action may be
  // scheduled from another thread (notify()) while run() configures the scheduler; the release
  // store after options_ is written lets notify() read options_.hooks after an acquire load.
  std::atomic<bool> federation_waits_{false};
  // Reactions of a shared level may be running on several workers, each of which may enqueue.
  // Written only by the advancing worker: set before it publishes a shared level, cleared once
  // every reaction of that level has completed. Read by reactions (enqueue()), which the state
  // word's release store and acquire loads order after the set, and the completion counter's
  // acq_rel adds before the clear.
  bool concurrent_ = false;
  Tag hold_from_ = Tag::forever();

  // Shared.
  std::atomic<std::uint64_t> state_{0};  // phase:32 | level:16 | next claim index:16
  std::atomic<std::uint32_t> completed_{0};
  Parker work_;      // workers wait here for a new phase
  Parker external_;  // the advancing worker waits here for grants, physical events, stops
  AtomicTag grant_;
  AtomicTag requested_stop_{Tag::forever()};
  std::atomic<bool> stop_now_{false};
  std::atomic<bool> abort_{false};
  std::atomic<bool> stop_decided_{false};  // request_stop_at() was called (release/acquire)
  std::atomic<bool> running_{false};
  std::atomic<bool> finished_{false};
  std::atomic<std::uint64_t> late_events_{0};
  std::mutex failure_mutex_;     // taken only when a reaction throws
  std::exception_ptr failure_;   // guarded by failure_mutex_ (read after run())
  std::string failed_reaction_;  // guarded by failure_mutex_ (read after run())
};

}  // namespace tagflow::reactors
