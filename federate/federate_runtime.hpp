// FederateRuntime: runs one federate of a program that is not a reactor program — a small
// tag-ordered event loop over FederateClient plus the FederateDataPlane (transport/WIRE.md) that
// ReactorFederate uses too. Tests use it; reactor programs bind the same client and data plane to
// the reactor scheduler instead (reactors/federation.hpp, reactor_federate.hpp).
//
// The loop (PROTOCOL.md §3): next = min(program's next local event, earliest received input);
// if next <= the safe tag (the latest TAG whose data messages have all arrived, by the counts in
// the grant), react at next and send its outputs; otherwise send NET(next) once and wait for
// control or data messages. LTCs are batched: one LTC, carrying the in-transit reports of every
// output sent since the previous one and the next tag, goes out before the federate waits, after
// kTagsPerLtc tags, and before it resigns. It resigns when nothing remains (next and the grant
// are both forever) or past the stop tag.
// A program reacts to a whole tag at once, so it cannot wait inside a tag for an input still to
// come: a federate on a zero-delay cycle across federates (which needs PTAG, PROTOCOL.md §3.7)
// is refused at construction; ReactorFederate runs those.
// Errors: FederationConfigError at construction; FederationError from the client (refusal,
// failure of another federate, lost coordinator); a program's exception propagates after the
// federate's sockets are closed.
// Thread-safety: run() blocks the calling thread; the program is called only from it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "federate/federate_client.hpp"
#include "federate/federate_data_plane.hpp"
#include "transport/peer_drop_counters.hpp"

namespace tagflow::coordinator {

struct InputMessage {
  std::string from;
  std::uint32_t port = 0;
  std::string bytes;
};

/// Where a program's reaction puts its outputs; delivered after the reaction returns.
class Outbox {
 public:
  /// Sends `bytes` to input `port` of downstream federate `to`; it arrives at this tag plus the
  /// connection's delay.
  void send(const std::string& to, std::uint32_t port, std::string bytes) {
    outputs_.push_back({to, port, std::move(bytes)});
  }
  struct Output {
    std::string to;
    std::uint32_t port;
    std::string bytes;
  };
  std::vector<Output>& outputs() { return outputs_; }

 private:
  std::vector<Output> outputs_;
};

/// A federate's behaviour, called from FederateRuntime::run().
class FederatedProgram {
 public:
  virtual ~FederatedProgram() = default;
  /// The earliest tag of a local event (timer, schedule), or kForever.
  virtual WireTag next_local_event() = 0;
  /// Runs at `tag` with its inputs in a deterministic order (by upstream, port, arrival).
  virtual void react(const WireTag& tag, const std::vector<InputMessage>& inputs, Outbox& out) = 0;
  /// (upstream federate, port) pairs this federate accepts.
  virtual std::vector<std::pair<std::string, std::uint32_t>> input_ports() = 0;
};

struct FederateRunSummary {
  std::uint64_t tags_processed = 0;
  std::uint64_t messages_sent = 0;
  std::uint64_t messages_received = 0;
  std::uint64_t messages_dropped = 0;
  WireTag last_tag = transport::kNever;
};

class FederateRuntime {
 public:
  /// `spec` describes the whole federation; this process runs federate `id`, receiving data on
  /// `data_bind` (e.g. "tcp://127.0.0.1:*").
  FederateRuntime(const FederationSpec& spec, std::string id, FederatedProgram& program,
                  std::string data_bind = "tcp://127.0.0.1:*");
  ~FederateRuntime();
  FederateRuntime(const FederateRuntime&) = delete;
  FederateRuntime& operator=(const FederateRuntime&) = delete;

  /// The endpoint the data socket is bound to (after construction).
  const std::string& data_endpoint() const { return plane_.endpoint(); }
  const transport::PeerDropCounters& drops() const { return plane_.drops(); }

  /// Joins, runs until the end and resigns. Throws FederationError.
  FederateRunSummary run(std::chrono::milliseconds join_timeout = std::chrono::seconds(30));

 private:
  WireTag next_tag();
  /// Reads at most FederateDataPlane::kMaxReceivedPerCall data messages; true when it stopped at
  /// that bound.
  bool receive_data();
  void update_safe_tag(const FederateClient& client);
  void react_at(const WireTag& tag, FederateClient& client);

  const FederationSpec& spec_;
  std::string id_;
  FederatedProgram& program_;
  zmq::context_t context_;
  FederateDataPlane plane_;
  std::map<WireTag, std::vector<InputMessage>> pending_;  // received inputs by tag
  WireTag safe_ = transport::kNever;
  /// Tags completed before one LTC is sent anyway (a federate that never waits still reports).
  static constexpr int kTagsPerLtc = 16;
  FederateRunSummary summary_;
};

}  // namespace tagflow::coordinator
