#include "reactors/scheduler.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "reactors/reactor.hpp"

namespace tagflow::reactors {
namespace {

// The state word: phase (32 bits) | level (16 bits) | next claim index (16 bits).
constexpr std::uint64_t kIdleLevel = 0xFFFF;       // no work published: wait
constexpr std::uint64_t kTerminateLevel = 0xFFFE;  // the run is over: exit
constexpr std::uint64_t kMaxLevels = 0xFFFD;
constexpr std::uint64_t kMaxReactionsPerLevel = 0xFFFF;
constexpr int kSpinsBeforePark = 4000;
// Inline runs of a level with several reactions are timed one in kTimeEvery (two clock reads are
// not free next to reactions of a few nanoseconds); a level that is shared is run inline and
// re-timed one in kRetimeEvery, so a level whose reactions became cheap goes back inline.
constexpr std::uint32_t kTimeEvery = 16;
constexpr std::uint32_t kRetimeEvery = 64;

constexpr std::uint64_t make_state(std::uint64_t phase, std::uint64_t level) {
  return (phase << 32) | (level << 16);
}
constexpr std::uint64_t level_of(std::uint64_t state) { return (state >> 16) & 0xFFFF; }
constexpr std::uint64_t index_of(std::uint64_t state) { return state & 0xFFFF; }

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace

Scheduler::Scheduler() = default;

Scheduler::~Scheduler() {
  for (std::thread& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
}

void Scheduler::configure(const SchedulerOptions& options,
                          std::vector<std::vector<Reaction*>> levels,
                          std::vector<EventSource*> sources, std::vector<EventSource*> physical,
                          std::vector<LifecycleTrigger*> startup,
                          std::vector<LifecycleTrigger*> shutdown) {
  if (levels.size() > kMaxLevels) throw std::length_error("too many reaction levels");
  options_ = options;
  if (options_.workers == 0) options_.workers = 1;
  level_count_ = levels.size();
  levels_ = std::make_unique<Level[]>(level_count_ == 0 ? 1 : level_count_);
  for (std::size_t i = 0; i < level_count_; ++i) {
    if (levels[i].size() > kMaxReactionsPerLevel) {
      throw std::length_error("too many reactions in one level");
    }
    levels_[i].slots = std::make_unique<Reaction*[]>(levels[i].size());
  }
  sources_ = std::move(sources);
  physical_ = std::move(physical);
  due_.reserve(sources_.size());
  startup_ = std::move(startup);
  shutdown_ = std::move(shutdown);
  stop_tag_ = options_.timeout_tag;
  federation_waits_.store(
      options_.workers == 1 && options_.hooks.wait && options_.hooks.poll && options_.hooks.wake,
      std::memory_order_release);
  // raise, not store: a grant() given between assembly and run() must not be lost.
  grant_.raise_to(options_.initial_grant);
  state_.store(make_state(0, kIdleLevel), std::memory_order_relaxed);
}

void Scheduler::grant(Tag tag) {
  if (grant_.raise_to(tag)) notify();
}

void Scheduler::request_stop() {
  stop_now_.store(true, std::memory_order_release);
  notify();
}

void Scheduler::stop_without_grant() {
  abort_.store(true, std::memory_order_release);
  notify();
}

void Scheduler::request_stop_at(Tag tag) {
  requested_stop_.lower_to(tag);
  stop_decided_.store(true, std::memory_order_release);
  notify();
}

namespace {
// True on the thread inside hooks.wait or hooks.poll: what it notifies, it sees when it returns.
thread_local bool in_federation_wait = false;
}  // namespace

void Scheduler::notify() {
  external_.notify_all();
  if (federation_waits_.load(std::memory_order_acquire) && !in_federation_wait) {
    options_.hooks.wake();
  }
}

void Scheduler::federation_poll() {
  in_federation_wait = true;
  options_.hooks.poll();
  in_federation_wait = false;
}

void Scheduler::wait_external(std::uint32_t epoch, std::int64_t timeout_ns) {
  // The federation's wait blocks in its socket poll, whose timeout counts milliseconds: below
  // one, it only looks (hooks.poll) and the parker sleeps the rest (notify() wakes both).
  const bool federation_waits = federation_waits_.load(std::memory_order_relaxed);
  if (!federation_waits || (timeout_ns >= 0 && timeout_ns < 1'000'000)) {
    if (federation_waits) federation_poll();
    external_.wait(epoch, timeout_ns);
    return;
  }
  in_federation_wait = true;
  options_.hooks.wait(timeout_ns);
  in_federation_wait = false;
}

void Scheduler::run() {
  running_.store(true, std::memory_order_release);
  if (options_.workers == 1) {
    run_single_threaded();
  } else {
    // The other workers start when a level is first worth sharing (publish_next_work): a
    // program of small reactions never pays for their start-up.
    if (!publish_next_work()) {
      publish_state(++phase_, kTerminateLevel, true);
    }
    worker_loop();
    for (std::thread& thread : threads_) thread.join();
    threads_.clear();
  }
  for (EventSource* source : sources_) source->clear();
  finished_.store(true, std::memory_order_release);
  running_.store(false, std::memory_order_release);
  // Events that raced with the end: drain and drop, so that queued values are released.
  for (EventSource* source : physical_) source->drain_external(current_);
  for (EventSource* source : physical_) source->clear();
}

void Scheduler::run_single_threaded() {
  // The same level schedule as worker_loop(), without claims or wake-ups.
  for (;;) {
    advance_tag();
    for (std::size_t level = 0; level < level_count_; ++level) {
      Level& queue = levels_[level];
      const std::uint32_t count = queue.count.load(std::memory_order_relaxed);
      for (std::uint32_t i = 0; i < count; ++i) run_reaction(*queue.slots[i]);
    }
    if (!complete_tag()) return;
  }
}

namespace {
thread_local const Reaction* running_on_this_thread = nullptr;  // Scheduler::running_reaction()
}  // namespace

const Reaction* Scheduler::running_reaction() noexcept { return running_on_this_thread; }

void Scheduler::run_reaction(Reaction& reaction) noexcept {
  running_on_this_thread = &reaction;
  trace::TraceRecorder* const tracer = trace::active();
  const std::int64_t started_at = tracer != nullptr ? trace::TraceRecorder::now_ns() : 0;
  try {
    reaction.body_();
  } catch (...) {
    bool first = false;
    {
      const std::lock_guard<std::mutex> lock(failure_mutex_);
      if (!failure_) {  // else the run is stopping already
        failure_ = std::current_exception();
        failed_reaction_ = reaction.full_name();
        first = true;
      }
    }
    if (first) stop_without_grant();
  }
  running_on_this_thread = nullptr;
  if (tracer != nullptr) trace_reaction(*tracer, reaction, started_at);
}

void Scheduler::trace_reaction(trace::TraceRecorder& tracer, Reaction& reaction,
                               std::int64_t started_at) {
  if (reaction.trace_recorder_ != &tracer) {
    reaction.trace_name_ = tracer.intern(reaction.full_name());
    reaction.trace_recorder_ = &tracer;
  }
  tracer.record({trace::Kind::kReaction, started_at, trace::TraceRecorder::now_ns() - started_at,
                 current_, reaction.trace_name_, 0, 0, 0});
}

void Scheduler::trace_wait(trace::Kind kind, const Tag& tag) {
  trace::TraceRecorder* const tracer = trace::active();
  if (tracer == nullptr || data_wait_) return;
  if (wait_since_ != 0 && (kind != wait_kind_ || tag != wait_tag_)) end_traced_wait();
  if (wait_since_ == 0) {
    wait_since_ = trace::TraceRecorder::now_ns();
    wait_kind_ = kind;
    wait_tag_ = tag;
  }
}

void Scheduler::begin_data_wait(const Tag& tag) {
  if (data_wait_ || trace::active() == nullptr) return;
  end_traced_wait();
  trace_wait(trace::Kind::kWaitData, tag);
  data_wait_ = true;
}

void Scheduler::end_data_wait() {
  if (data_wait_) end_traced_wait();
}

void Scheduler::end_traced_wait() {
  data_wait_ = false;
  if (wait_since_ == 0) return;
  if (trace::TraceRecorder* const tracer = trace::active()) {
    tracer->record({wait_kind_, wait_since_, trace::TraceRecorder::now_ns() - wait_since_,
                    wait_tag_, 0, 0, 0, 0});
  }
  wait_since_ = 0;
}

void Scheduler::publish_state(std::uint64_t phase, std::uint64_t level, bool wake) {
  state_.store(make_state(phase, level), std::memory_order_release);
  if (wake) work_.notify_all();
}

bool Scheduler::worth_sharing(Level& level, std::uint32_t count) const {
  if (count < 2) return false;
  if (options_.share_threshold_ns <= 0) return true;
  if (level.reaction_ns * static_cast<std::int64_t>(count) < options_.share_threshold_ns) {
    return false;
  }
  return level.runs % kRetimeEvery != 0;
}

void Scheduler::run_inline(Level& level, std::uint32_t count) {
  const bool timed = count > 1 && level.runs % kTimeEvery == 0;
  ++level.runs;
  if (!timed) {
    for (std::uint32_t i = 0; i < count; ++i) run_reaction(*level.slots[i]);
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  for (std::uint32_t i = 0; i < count; ++i) run_reaction(*level.slots[i]);
  const std::int64_t per_reaction =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
          .count() /
      count;
  // The smaller of the last two samples: a sample the OS stretched by preempting the worker (a
  // loaded machine) does not make a cheap level look worth sharing; two in a row rarely happen.
  level.reaction_ns = std::min(per_reaction, level.last_sample_ns);
  level.last_sample_ns = per_reaction;
}

bool Scheduler::publish_next_work() {
  concurrent_ = false;  // every reaction of the shared level (if any) has completed
  for (;;) {
    if (in_tag_) {
      for (std::size_t level = next_level_; level < level_count_; ++level) {
        Level& queue = levels_[level];
        const std::uint32_t count = queue.count.load(std::memory_order_relaxed);
        if (count == 0) continue;
        if (!worth_sharing(queue, count)) {
          // Reactions it runs enqueue only into later levels, which this loop reaches next.
          run_inline(queue, count);
          continue;
        }
        ++queue.runs;
        if (threads_.empty()) {  // only this (the calling) thread runs before they start
          threads_.reserve(options_.workers - 1);
          for (unsigned i = 1; i < options_.workers; ++i)
            threads_.emplace_back([this] { worker_loop(); });
        }
        next_level_ = level + 1;
        completed_.store(0, std::memory_order_relaxed);
        shared_ = true;
        concurrent_ = true;
        // The publishing worker claims work itself next and wakes the others.
        publish_state(++phase_, level, true);
        return true;
      }
      // No level left: park the workers on an idle state before the level queues are reused
      // (not needed when nothing was published: they are still parked on the idle state).
      if (shared_) {
        shared_ = false;
        publish_state(++phase_, kIdleLevel, false);
      }
      if (!complete_tag()) return false;
    }
    advance_tag();
    next_level_ = 0;
  }
}

void Scheduler::worker_loop() {
  for (;;) {
    std::uint64_t state = state_.load(std::memory_order_acquire);
    const std::uint64_t level = level_of(state);
    if (level == kTerminateLevel) return;
    if (level != kIdleLevel) {
      const std::uint64_t index = index_of(state);
      const std::uint32_t count = levels_[level].count.load(std::memory_order_relaxed);
      if (index < count) {
        if (state_.compare_exchange_weak(state, state + 1, std::memory_order_acq_rel,
                                         std::memory_order_acquire)) {
          run_reaction(*levels_[level].slots[index]);
          if (completed_.fetch_add(1, std::memory_order_acq_rel) + 1 == count) {
            if (!publish_next_work()) {
              publish_state(++phase_, kTerminateLevel, true);
              return;
            }
          }
        }
        continue;
      }
    }
    wait_for_state_change(state);
  }
}

void Scheduler::wait_for_state_change(std::uint64_t seen) {
  for (int i = 0; i < kSpinsBeforePark; ++i) {
    if (state_.load(std::memory_order_acquire) != seen) return;
    cpu_relax();
  }
  for (;;) {
    const std::uint32_t epoch = work_.epoch();
    if (state_.load(std::memory_order_acquire) != seen) return;
    work_.wait(epoch);
  }
}

bool Scheduler::complete_tag() {
  for (std::size_t level = 0; level < level_count_; ++level) {
    levels_[level].count.store(0, std::memory_order_relaxed);
  }
  in_tag_ = false;
  if (options_.hooks.tag_complete) options_.hooks.tag_complete(current_);
  return !final_tag_;
}

Tag Scheduler::earliest_event() {
  Tag best = Tag::forever();
  due_.clear();
  for (EventSource* source : sources_) {
    const Tag tag = source->next_event_tag();
    if (tag < best) {
      best = tag;
      due_.clear();
      due_.push_back(source);
    } else if (tag == best && !tag.is_forever()) {
      due_.push_back(source);
    }
  }
  earliest_ = best;
  return best;
}

void Scheduler::apply_stop_requests() {
  const Tag floor = started_ ? current_.next_microstep() : options_.start_tag;
  if (abort_.load(std::memory_order_acquire) && floor <= stop_tag_) {
    stop_tag_ = floor;
    local_stop_ = true;
  }
  if (stop_now_.exchange(false, std::memory_order_acq_rel)) {
    if (options_.hooks.stop_requested) {
      // Proposed: process nothing at or past the proposal until the federation decides.
      if (!stop_held_) {
        stop_held_ = true;
        hold_from_ = floor;
      }
      options_.hooks.stop_requested(floor);
    } else if (floor <= stop_tag_) {
      stop_tag_ = floor;
      local_stop_ = true;
    }
  }
  const Tag requested = requested_stop_.load();
  if (requested < stop_tag_) stop_tag_ = requested < floor ? floor : requested;
}

void Scheduler::advance_tag() {
  Tag next;
  if (federation_waits_.load(std::memory_order_relaxed)) federation_poll();
  for (;;) {
    const std::uint32_t epoch = external_.epoch();  // read before checking the conditions
    // The grant is read BEFORE the physical events are drained. Whoever grants g has first
    // scheduled every value with a tag <= g (federation.hpp step 3); reading the grant first
    // (acquire) makes those values visible to the drain below. Reading it after the drain would
    // let a value and its grant both arrive in between: the tag would run without the value,
    // which would then be late.
    const Tag granted = options_.tag_barrier ? grant_.load() : Tag::forever();
    // Read before apply_stop_requests(): a decision seen here has its stop tag visible there.
    const bool stop_decided = stop_decided_.load(std::memory_order_acquire);
    const Tag floor = started_ ? current_ : options_.start_tag.predecessor();
    for (EventSource* source : physical_) source->drain_external(floor);
    apply_stop_requests();
    next = earliest_event();                   // also collects the sources due at it
    if (!started_) next = options_.start_tag;  // timers with no offset fire at the start tag
    if (stop_tag_ < next) next = stop_tag_;
    if (next.is_forever() && !options_.keepalive) {
      stop_tag_ = started_ ? current_.next_microstep() : options_.start_tag;
      next = stop_tag_;
    }
    if (options_.hooks.next_event_tag && next != last_announced_) {
      last_announced_ = next;
      options_.hooks.next_event_tag(next);
    }
    // A stop decided locally (request_stop() without a federation to ask, stop_without_grant())
    // ends the run at its stop tag without waiting for a grant: nothing is committed to others.
    const bool unbarred = local_stop_ && next == stop_tag_;
    const bool held = stop_held_ && !stop_decided && !unbarred && hold_from_ <= next;
    if (next.is_forever() || held || (!unbarred && granted < next)) {
      // Nothing to run (an event from outside will come), or the coordinator's word is missing.
      trace_wait(next.is_forever() ? trace::Kind::kWaitData : trace::Kind::kWaitGrant, next);
      wait_external(epoch, -1);
      continue;
    }
    if (!options_.fast) {
      const std::int64_t wait_ns = next.time_ns() - physical_time_ns();
      if (wait_ns > 0) {
        trace_wait(trace::Kind::kWaitTime, next);
        wait_external(epoch, wait_ns);
        continue;
      }
    }
    break;
  }
  end_traced_wait();
  current_ = next;
  ++sequence_;
  in_tag_ = true;
  if (earliest_ == next) {
    for (EventSource* source : due_) source->fire(next);
  }
  if (!started_) {
    started_ = true;
    for (LifecycleTrigger* trigger : startup_) trigger->trigger();
  }
  if (next == stop_tag_) {
    final_tag_ = true;
    for (LifecycleTrigger* trigger : shutdown_) trigger->trigger();
  }
}

}  // namespace tagflow::reactors
