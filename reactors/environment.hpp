// Environment: the entry point. It owns the reactors of one program, wires their connections,
// checks the program at assembly and runs it.
//
//   EnvironmentConfig config;
//   config.workers = 4;
//   Environment env(config);
//   auto& source = env.add<Source>("source");
//   auto sinks = env.add_bank<Sink>("sink", 8);
//   env.connect_broadcast(source.out, sinks.ports(&Sink::in));
//   env.run();                                // assembles, runs to the stop tag, returns
//
// Phases are checked: declare (add, connect) -> assemble() -> run() -> done. assemble() throws
// AssemblyError naming the ports and reactions involved for: a value-type mismatch, two
// connections into one input, a connection into an output or out of an input, a cycle with no
// delay, an effect the reaction's reactor does not own, a reaction without a body. Declaring after
// assembly throws AssemblyError too, and so does connect_each itself, at the call, for banks of
// two widths.
//
// Contract: not copyable; declare and run from one thread. run() blocks until the stop tag
// (timeout, request_stop(), or no more events without keepalive), then returns; it may be called
// once. When a reaction threw, the run stops at the next tag and run() throws ReactionError naming
// the reaction (the process is not terminated). request_stop(), stop_at(), grant() and physical
// actions are thread-safe and lock-free. The environment must outlive every thread that schedules
// its physical actions.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "reactors/bank.hpp"
#include "reactors/errors.hpp"
#include "reactors/federation.hpp"
#include "reactors/multiport.hpp"
#include "reactors/port.hpp"
#include "reactors/reactor.hpp"
#include "reactors/scheduler.hpp"
#include "reactors/tag.hpp"

namespace tagflow::reactors {

struct EnvironmentConfig {
  /// Worker threads, including the caller of run(); 1 = single-thread mode (no threads started).
  unsigned workers = 1;
  /// With several workers, a level is shared among them only when its reactions' measured cost
  /// reaches this; cheaper levels run on one worker (scheduler.hpp). 0: share every level of two
  /// or more reactions.
  Duration share_threshold = std::chrono::microseconds(100);
  /// Fast mode: logical time runs ahead of physical time. False: real-time mode (tags wait).
  bool fast = true;
  /// Stop at start + timeout (the shutdown tag). Unset: run until stopped or out of events.
  std::optional<Duration> timeout;
  /// The start tag's time (ns since the Unix epoch). Unset: physical time when run() starts.
  std::optional<std::int64_t> start_time_ns;
  /// Keep running when no event is pending. Unset: true when the program has physical actions
  /// or a tag barrier (events can still come from outside), false otherwise.
  std::optional<bool> keepalive;
  /// The program is the whole run, so a stop cutoff known only after it (the earliest stop tag
  /// proposed, nodes/README.md) is never a tag this environment had already processed when it
  /// was proposed: a proposal is at least the next microstep. False for a federate, where
  /// another program may propose a tag this one has passed. The scheduler does not read it;
  /// reactors that keep per-tag records for that cutoff (nodes/channel_digest.hpp) keep only
  /// the recent ones when it is true.
  bool cutoff_never_behind = false;
};

class Environment {
 public:
  explicit Environment(EnvironmentConfig config = {});
  ~Environment();
  Environment(const Environment&) = delete;
  Environment& operator=(const Environment&) = delete;

  /// Constructs R(name, *this, args...) owned by the environment.
  template <class R, class... Args>
  R& add(std::string name, Args&&... args) {
    check_declaring("add " + name);
    auto reactor = std::make_unique<R>(std::move(name), *this, std::forward<Args>(args)...);
    R& ref = *reactor;
    owned_.push_back(std::move(reactor));
    return ref;
  }
  /// Constructs R(name + "[i]", *this, i, args...) for i in [0, n).
  template <class R, class... Args>
  Bank<R> add_bank(const std::string& name, std::size_t n, const Args&... args) {
    std::vector<R*> members;
    for (std::size_t i = 0; i < n; ++i) {
      members.push_back(&add<R>(name + "[" + std::to_string(i) + "]", i, args...));
    }
    return Bank<R>(std::move(members));
  }

  /// Connects an output to an input; `after` set = delayed connection (0 = next microstep).
  /// Type and direction errors are reported by assemble() (they may come from config files).
  void connect(PortBase& from, PortBase& to, std::optional<Duration> after = std::nullopt);
  /// Connects from[i] to to[i] for every i (multiports, Bank::ports()); widths must match.
  template <class From, class To>
  void connect_each(From&& from, To&& to, std::optional<Duration> after = std::nullopt) {
    if (from.size() != to.size()) width_mismatch(from.size(), to.size());
    for (std::size_t i = 0; i < from.size(); ++i) connect(from[i], to[i], after);
  }
  /// Connects one output to every port of `to`.
  template <class To>
  void connect_broadcast(PortBase& from, To&& to, std::optional<Duration> after = std::nullopt) {
    for (std::size_t i = 0; i < to.size(); ++i) connect(from, to[i], after);
  }

  /// Federation (federation.hpp): no tag above the grant is processed until grant() raises it.
  void enable_tag_barrier(Tag initial_grant = Tag::never());
  /// Throws std::invalid_argument unless wait, poll and wake are set all three (with one worker)
  /// or none (federation.hpp 8).
  void set_federation_hooks(FederationHooks hooks);
  /// Raises the grant (TAG). Thread-safe; wakes the scheduler.
  void grant(Tag tag);

  /// Runs `first` before `second` whenever both run at one tag, unless `second` already leads
  /// to `first` through the program's dependencies (then the hint is skipped: it never makes a
  /// cycle). Hints are applied at assembly in the order given. Declaring phase only.
  void order_before(Reaction& first, Reaction& second);

  /// Validates the program and computes the levels. Idempotent; throws AssemblyError.
  void assemble();
  /// Assembles if needed and runs to the end. Throws std::logic_error when called twice.
  void run();

  /// Stops at the next microstep after the current tag (any thread; from a reaction, the tag
  /// after the one it runs at). With hooks.stop_requested set, asks the federation instead.
  void request_stop();
  /// Stops at `tag` (or at the next tag if `tag` has passed). Any thread.
  void stop_at(Tag tag);
  /// Stops at the next microstep without asking the federation and without waiting for a grant:
  /// for a federation that failed. Any thread. (request_stop() without hooks.stop_requested is
  /// local too and does not wait for a grant either.)
  void stop_without_grant();

  [[nodiscard]] const EnvironmentConfig& config() const { return config_; }
  /// A federation's floor under the stop cutoff (federation/PROTOCOL.md §5.1, FLOOR): every
  /// stop proposal still to come is after `tag`. Only raises it. Any thread.
  void raise_cutoff_floor(Tag tag);
  /// The floor, rounded down to microstep 0 (Tag::never() until raised): reactors that keep
  /// per-tag records for a cutoff known only at the end (nodes/channel_digest.hpp) drop the ones
  /// no cutoff after it needs. Any thread.
  [[nodiscard]] Tag cutoff_floor() const {
    return Tag(cutoff_floor_ns_.load(std::memory_order_relaxed), 0);
  }
  /// True from a successful assemble() on.
  [[nodiscard]] bool assembled() const { return phase_ != Phase::kDeclaring; }
  /// The start tag (valid from run() on).
  [[nodiscard]] Tag start_tag() const { return start_tag_; }
  [[nodiscard]] Scheduler& scheduler() { return scheduler_; }
  [[nodiscard]] const std::vector<Reactor*>& reactors() const { return reactors_; }
  /// The reactor named `name`, or nullptr.
  [[nodiscard]] Reactor* find_reactor(const std::string& name) const;
  /// Number of levels (valid after assemble()).
  [[nodiscard]] std::size_t level_count() const { return levels_.size(); }
  /// Values injected with schedule_at() that arrived too late (federation protocol violations).
  [[nodiscard]] std::uint64_t late_events() const { return scheduler_.late_events(); }
  /// Tags processed so far (after run(): in the whole run).
  [[nodiscard]] std::uint64_t tags_processed() const { return scheduler_.tags_processed(); }

 private:
  friend class Reactor;
  struct PendingConnection {
    PortBase* from;
    PortBase* to;
    std::optional<Duration> after;
  };
  enum class Phase { kDeclaring, kAssembled, kRunning, kDone };

  void register_reactor(Reactor* reactor);
  void check_declaring(const std::string& what) const;
  [[noreturn]] static void width_mismatch(std::size_t from, std::size_t to);
  void bind_connections();
  void check_effects() const;

  EnvironmentConfig config_;
  Phase phase_ = Phase::kDeclaring;
  std::vector<std::unique_ptr<Reactor>> owned_;
  std::vector<Reactor*> reactors_;
  std::vector<PendingConnection> connections_;
  std::vector<std::unique_ptr<EventSource>> delayed_connections_;
  std::vector<std::pair<Reaction*, Reaction*>> ordering_hints_;
  std::vector<std::vector<Reaction*>> levels_;
  bool tag_barrier_ = false;
  Tag initial_grant_ = Tag::never();
  FederationHooks hooks_;
  Tag start_tag_;
  std::atomic<std::int64_t> cutoff_floor_ns_{Tag::never().time_ns()};
  Scheduler scheduler_;
};

}  // namespace tagflow::reactors
