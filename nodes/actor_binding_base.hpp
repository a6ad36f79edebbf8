// NodeActorBase: the peer handling every node actor shares, written once for the seven actor
// bindings: one per kind, and the inference kind's policy bank (nodes/<kind>/<kind>_actor.cpp and
// nodes/inference/policy_bank_actor.cpp derive from it with their typed interface).
//
// It owns the actor's PeerSet and the protocol steps that are not per port
// (actors/control_messages.hpp):
//   - add_peer(): a new peer is monitored; a transient peer (a replica of a kind that may join and
//     leave, nodes/kind/node_kind.hpp) that told its name is marked in tagflow_actor_members (how
//     the launcher finds joined samplers);
//   - forget(): Leave from a peer, or its down message: the peer is demonitored and dropped, the
//     kind drops what it held for it (forget_peer_state()), the member mark goes to 0;
//   - a peer that goes down is forgotten; if it was not transient (replay, learner, inference:
//     the run cannot go on without it) the run stops for this actor too — unless the launcher
//     restarts dead processes (ActorRecovery::peers_return): then the actor records what it had
//     sent the peer unanswered (unanswered_to(), into ReplicaReport::unanswered_at_loss) and
//     goes on without it; the peer's restarted process links to it again;
//   - checkpoints (nodes/actor_checkpoint.hpp): restore_from_checkpoint() in the kind's
//     constructor loads ActorRecovery::restore through the kind's load_checkpoint();
//     schedule_checkpoint() in make_behavior() and on_checkpoint() (the kind's checkpoint_atom
//     handler) write the kind's save_checkpoint() every ActorRecovery::every — a message to itself,
//     so between two of its messages;
//   - stop_run(reason): StopRun to every peer (on_stop_run: but the one it came from), the
//     reason recorded in the ReplicaReport (plus what record_results() adds: the learner's final
//     weights), quit.
//     Runs once; later calls do nothing. leave() is the same with Leave and reason "left";
//   - on exit every peer handle is dropped (drop_peer_handles() for the kind's own): terminated
//     actors holding each other's handles would keep each other alive;
//   - traffic (actors/peer_traffic.hpp): send_to() counts every message sent to a peer;
//     accept() checks a data message before the kind handles it — from a known peer (else
//     invalid, unknown_peer) and consistent (else invalid, size_mismatch) — and counts it
//     received; count_received() counts a control message from a peer; reject() counts what the
//     kind refuses (unknown_kind: a message it never expects; unknown_port: a port it has not).
//     Messages of the hosting process (connect, leave, step: no peer sender) are not traffic.
//
// Ownership: shares the ReplicaReport with the host; the NodeMetrics (optional) must outlive the
// actor. Thread-safety: an actor's state, touched only from its own message handlers (CAF runs
// one at a time); the report's fields are written as ReplicaReport documents.
#pragma once

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

#include <caf/actor_cast.hpp>
#include <caf/system_messages.hpp>

#include "actors/message_bytes.hpp"
#include "actors/message_types.hpp"
#include "actors/peer_set.hpp"
#include "actors/peer_traffic.hpp"
#include "common/state_stream.hpp"
#include "common/trace_recorder.hpp"
#include "nodes/actor_checkpoint.hpp"
#include "nodes/actor_interfaces.hpp"
#include "nodes/node_metrics.hpp"
#include "nodes/replica_report.hpp"

namespace tagflow::nodes {

template <class Interface>
class NodeActorBase : public Interface::base {
 public:
  NodeActorBase(caf::actor_config& cfg, std::string name, std::shared_ptr<ReplicaReport> report,
                nodes::NodeMetrics* metrics, ActorRecovery recovery = {})
      : Interface::base(cfg),
        name_(std::move(name)),
        report_(std::move(report)),
        metrics_(metrics),
        traffic_(metrics == nullptr ? nullptr : &metrics->process_metrics()),
        recovery_(std::move(recovery)) {
    this->set_down_handler([this](caf::down_msg& down) { on_down(down); });
  }

  void on_exit() override {
    drop_peer_handles();
    peers_ = {};
  }

 protected:
  /// The replica name of this actor.
  [[nodiscard]] const std::string& replica_name() const { return name_; }
  [[nodiscard]] ReplicaReport& report() { return *report_; }
  /// The node's metrics, or null.
  [[nodiscard]] nodes::NodeMetrics* metrics() { return metrics_; }
  [[nodiscard]] actors::PeerSet& peers() { return peers_; }
  /// True once stop_run() or leave() ran: the actor is quitting and handles nothing more.
  [[nodiscard]] bool done() const { return done_; }

  /// The sender of the current message (null when it has none or is gone).
  caf::actor sender_handle() { return caf::actor_cast<caf::actor>(this->current_sender()); }
  caf::actor_addr sender_address() {
    return this->current_sender() ? this->current_sender()->address() : caf::actor_addr{};
  }

  /// Sends `message` to `peer` through the PeerActor interface, counted as sent to it.
  template <class Message>
  void send_to(const caf::actor& peer, Message&& message) {
    const std::string& to = peers_.name_of(peer.address());
    traffic_.sent(to, actors::message_bytes(message));
    trace_message(trace::Kind::kSend, to, actors::message_bytes(message));
    this->send(as_peer(peer), std::forward<Message>(message));
  }

  /// True when the current data message may be handled (see the header comment).
  template <class Message>
  [[nodiscard]] bool accept(const Message& message) {
    const caf::actor_addr from = sender_address();
    if (!peers_.contains(from)) {
      traffic_.invalid(actors::PeerTraffic::kUnknownPeer, transport::DropReason::kUnknownPeer);
      return false;
    }
    const std::string peer = peers_.name_of(from);
    if (!consistent(message)) {
      traffic_.invalid(peer, transport::DropReason::kSizeMismatch);
      return false;
    }
    traffic_.received(peer, actors::message_bytes(message));
    trace_message(trace::Kind::kReceive, peer, actors::message_bytes(message));
    return true;
  }

  /// Counts a control message received from a peer (nothing when the sender is no peer).
  template <class Message>
  void count_received(const Message& message) {
    const caf::actor_addr from = sender_address();
    if (peers_.contains(from)) {
      traffic_.received(peers_.name_of(from), actors::message_bytes(message));
      trace_message(trace::Kind::kReceive, peers_.name_of(from), actors::message_bytes(message));
    }
  }

  /// True when the current message comes from a known peer; else it is counted invalid.
  [[nodiscard]] bool from_peer() {
    if (peers_.contains(sender_address())) return true;
    traffic_.invalid(actors::PeerTraffic::kUnknownPeer, transport::DropReason::kUnknownPeer);
    return false;
  }

  /// Counts the current message as invalid for `reason` and drops it.
  void reject(transport::DropReason reason) {
    traffic_.invalid(peers_.name_of(sender_address()), reason);
  }

  /// Adds `peer` (monitored when new); `name` is what it told (Offer.from), or "". Returns true
  /// when it was new.
  bool add_peer(const caf::actor& peer, bool transient, const std::string& name = "") {
    const bool added = peers_.add(peer, transient, name);
    if (added) this->monitor(peer);
    // As the set has it: a peer first added as a fixed one (the learner's inference server,
    // which later asks for weights as a sampler does) stays no member.
    if (peers_.is_transient(peer.address()) && !name.empty() && metrics_ != nullptr) {
      metrics_->set_member(name, true);
    }
    report_->peers.store(peers_.transients(), std::memory_order_relaxed);
    return added;
  }

  /// Forgets `peer` (a Leave, or it went down); see the header comment.
  void forget(const caf::actor_addr& peer) {
    const std::string name = peers_.name_of(peer);
    if (peers_.is_transient(peer) && !name.empty() && metrics_ != nullptr) {
      metrics_->set_member(name, false);
    }
    peers_.remove(peer);
    this->demonitor(peer);
    forget_peer_state(peer);
    report_->peers.store(peers_.transients(), std::memory_order_relaxed);
  }

  /// StopRun to every peer but `from` (the peer whose StopRun this passes on), record `reason`,
  /// quit (once). A stop decided here goes to every peer, the one whose message led to it too.
  void stop_run(const std::string& reason, const caf::actor_addr& from = caf::actor_addr{}) {
    if (done_) return;
    for (const actors::PeerSet::Peer& p : peers_.all()) {
      if (p.handle.address() != from) send_to(p.handle, actors::StopRun{reason});
    }
    finish(reason);
  }

  /// The handlers of Leave and StopRun from a peer (or StopRun from the host): counted, then the
  /// peer is forgotten / the run stops.
  void on_leave(const actors::Leave& leave) {
    count_received(leave);
    forget(sender_address());
  }
  void on_stop_run(const actors::StopRun& stop) {
    count_received(stop);
    stop_run(stop.reason, sender_address());
  }

  /// Leave to every peer, then quit with reason "left" (a joined sampler leaving).
  void leave() {
    if (done_) return;
    for (const actors::PeerSet::Peer& p : peers_.all()) send_to(p.handle, actors::Leave{name_});
    finish("left");
  }

  /// The kind's state for a checkpoint (the server state the reactor binding saves, without its
  /// digests); returns the replica's count. `table_path`: where a replay writes its table.
  /// Default: std::logic_error (a kind that cannot be checkpointed).
  virtual std::int64_t save_checkpoint(StateWriter& /*out*/, const std::string& /*table_path*/) {
    throw std::logic_error("a " + report_->kind + " actor cannot be checkpointed");
  }
  /// Loads what save_checkpoint() wrote; throws StateError (or the kind's own error) when it does
  /// not fit.
  virtual void load_checkpoint(StateReader& /*in*/, const std::string& /*table_path*/) {
    throw std::logic_error("a " + report_->kind + " actor cannot be checkpointed");
  }
  /// Messages sent to `peer` on this kind's credit links that it has not answered yet.
  virtual std::int64_t unanswered_to(const caf::actor_addr& /*peer*/) const { return 0; }

  /// In the kind's constructor (after its members are built): loads ActorRecovery::restore.
  void restore_from_checkpoint() {
    if (!recovery_.restore) return;
    StateReader in(recovery_.restore->state, actor_checkpoint_path(recovery_.checkpoint_prefix));
    load_checkpoint(in, recovery_.checkpoint_prefix + ".table");
    in.expect_end();
    sequence_ = recovery_.restore->sequence;
  }
  /// In make_behavior(): the first checkpoint, `every` from now (none without a prefix).
  void schedule_checkpoint() {
    if (recovery_.checkpoint_prefix.empty() || recovery_.every.count() <= 0) return;
    this->delayed_send(this, recovery_.every, actors::checkpoint_atom::value);
  }
  /// The kind's checkpoint_atom handler: writes the checkpoint, schedules the next. A failed
  /// write is logged (once) and the run goes on.
  void on_checkpoint() {
    if (done_) return;
    try {
      StateWriter out;
      ActorCheckpointFile file;
      file.count = save_checkpoint(out, recovery_.checkpoint_prefix + ".table");
      file.replica = name_;
      file.kind = report_->kind;
      file.written_unix_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count();
      file.sequence = ++sequence_;
      file.state = out.take();
      write_actor_checkpoint(actor_checkpoint_path(recovery_.checkpoint_prefix), file);
    } catch (const std::exception& e) {
      if (!checkpoint_failed_) {
        std::fprintf(stderr, "%s: checkpoint failed: %s\n", name_.c_str(), e.what());
      }
      checkpoint_failed_ = true;
    }
    schedule_checkpoint();
  }

  /// The kind drops what it holds for `peer` (credits, queued requests...).
  virtual void forget_peer_state(const caf::actor_addr& /*peer*/) {}
  /// The kind drops the peer handles it holds itself (ledgers, queues), on exit.
  virtual void drop_peer_handles() {}
  /// The kind adds its results to the report; called with report().mutex held.
  virtual void record_results(ReplicaReport& /*report*/) {}

  /// Records a message to or from `peer` in the trace (when the process traces): a `send` or
  /// `receive` span at its moment, its port field the message's number among those between the
  /// two actors that way, which both ends count alike (tracing/README.md, actor mode).
  void trace_message(trace::Kind kind, const std::string& peer, std::size_t bytes) {
    trace::TraceRecorder* const tracer = trace::active();
    if (tracer == nullptr || peer == actors::PeerTraffic::kUnknownPeer) return;
    std::uint32_t& number = (kind == trace::Kind::kSend ? traced_sent_ : traced_received_)[peer];
    tracer->record({kind, trace::TraceRecorder::now_ns(), 0, Tag::never(),
                    trace_names_.id(*tracer, name_), trace_names_.id(*tracer, peer), number++,
                    bytes});
  }

 private:
  void on_down(const caf::down_msg& down) {
    if (!peers_.contains(down.source)) return;
    const bool transient = peers_.is_transient(down.source);
    // A peer that ended normally sent its StopRun or Leave first; one whose process died (its
    // link dropped) did not.
    const bool died = static_cast<bool>(down.reason);
    if (recovery_.peers_return && died) {
      const std::string name = peers_.name_of(down.source);
      const std::int64_t unanswered = unanswered_to(down.source);
      std::lock_guard<std::mutex> lock(report_->mutex);
      report_->unanswered_at_loss[name.empty() ? "unknown" : name].push_back(unanswered);
    }
    forget(down.source);
    // A node the run needs is gone: the run ends, unless its process comes back.
    if (!transient && !recovery_.peers_return) stop_run("");
  }

  void finish(const std::string& reason) {
    done_ = true;
    {
      std::lock_guard<std::mutex> lock(report_->mutex);
      report_->stop_reason = reason;
      record_results(*report_);
    }
    report_->done.store(true);
    this->quit();
  }

  std::string name_;
  std::shared_ptr<ReplicaReport> report_;
  nodes::NodeMetrics* metrics_;
  actors::PeerTraffic traffic_;
  actors::PeerSet peers_;
  // Tracing (tracing/README.md): messages to and from each peer, numbered in order per peer.
  trace::NameCache trace_names_;
  std::map<std::string, std::uint32_t> traced_sent_, traced_received_;
  ActorRecovery recovery_;
  std::uint64_t sequence_ = 0;  // of the last checkpoint written (or restored)
  bool checkpoint_failed_ = false;
  bool done_ = false;
};

}  // namespace tagflow::nodes
