// FederateClient: the federate's side of the coordinator protocol (PROTOCOL.md), sockets only.
//
// It owns the control DEALER (routing id = federate id) and a heartbeat thread with its own
// DEALER (routing id = id + "#hb") that sends HEARTBEAT every timeout/4 and declares the
// coordinator lost when no reply came for a whole timeout. join() sends JOIN and waits for START;
// the send_* methods report NET, LTC, messages in transit, stop requests and the resignation;
// poll() applies incoming grants, stop messages and failures to the client's state. A runtime
// (FederateRuntime, or a reactor binding) drives it from one thread.
//
// Errors: REFUSED, FAILED (another federate died), a lost coordinator and join timeouts throw
// FederationError with a message naming the federate concerned. Thread-safety: every method
// belongs to one thread; the heartbeat thread shares only an atomic flag.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <zmq.hpp>

#include "common/trace_recorder.hpp"
#include "federation/control_message.hpp"
#include "federation/federation_spec.hpp"

namespace tagflow::coordinator {

class FederationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// This federate could not start, for a reason of its own that no other federate caused (its data
/// endpoint cannot be bound): `tagflow node` exits 1 for it, not 4, so that its launcher reports
/// the death to the coordinator (PROTOCOL.md §8.1).
class FederateSetupError : public FederationError {
 public:
  using FederationError::FederationError;
};

/// This federate cannot go on: a data message that its grants count was dropped (PROTOCOL.md
/// §3.4), or a value it could not send (over the message cap, transport/WIRE.md §3). The
/// runtimes report it to the coordinator (report_failure) before they stop.
class DataLossError : public FederationError {
 public:
  using FederationError::FederationError;
};

/// A value too large for one message (over the message cap, transport/WIRE.md §3): what the
/// cluster file asks for cannot travel between these two processes, however often the run is
/// started again. Carries what the runtimes need to say which value it was.
class MessageCapError : public DataLossError {
 public:
  MessageCapError(const std::string& federate, const std::string& to, std::uint32_t port,
                  std::size_t bytes, std::size_t cap)
      : DataLossError(describe(federate, to, "input " + std::to_string(port), bytes, cap)),
        to_(to),
        port_(port),
        bytes_(bytes),
        cap_(cap) {}
  /// The reason with the port named `port_name` (e.g. "weights[0]") instead of its number.
  [[nodiscard]] std::string with_port_name(const std::string& federate,
                                           const std::string& port_name) const {
    return describe(federate, to_, port_name, bytes_, cap_);
  }
  [[nodiscard]] std::uint32_t port() const { return port_; }
  /// The same error said as `reason`.
  MessageCapError(const MessageCapError& error, const std::string& reason)
      : DataLossError(reason),
        to_(error.to_),
        port_(error.port_),
        bytes_(error.bytes_),
        cap_(error.cap_) {}

 private:
  static std::string describe(const std::string& federate, const std::string& to,
                              const std::string& port, std::size_t bytes, std::size_t cap) {
    return "federate '" + federate + "': a value of " + std::to_string(bytes) + " bytes for " +
           port + " of '" + to + "' is over the message cap of " + std::to_string(cap) +
           " bytes (transport/WIRE.md, section 3); nothing was sent";
  }
  std::string to_;
  std::uint32_t port_;
  std::size_t bytes_;
  std::size_t cap_;
};

struct FederateOptions {
  std::string id;
  std::string coordinator_endpoint;
  std::vector<UpstreamLink> upstreams;
  std::vector<std::string> downstreams;
  std::string data_endpoint;  ///< where this federate receives data (sent in JOIN)
  std::chrono::milliseconds heartbeat_timeout{2000};
  std::optional<std::string> keys_dir;  ///< CURVE client (keys of `id`) when set
  /// True: poll() answers the coordinator's STOP_REQUEST itself, with max(tag, stop floor).
  /// False: it keeps the request for take_stop_request() and the runtime answers.
  bool answer_stop_requests = true;
  /// The protocol version it speaks (JOIN's first field): kProtocolVersion, or an older one the
  /// coordinator still accepts (PROTOCOL.md §2.5). The data plane reads it from here: version 3
  /// reads and sends data header 2 only.
  std::uint32_t protocol_version = kProtocolVersion;
  /// The digest of the cluster file this federate runs (FederationSpec::file_digest): join()
  /// compares it with the one START carries, and a difference ends the run (PROTOCOL.md §2.3).
  /// Empty: not compared.
  std::string file_digest;

  /// The options of federate `id` as the spec describes it; throws FederationConfigError when
  /// `id` is not in the spec.
  static FederateOptions from_spec(const FederationSpec& spec, const std::string& id);
};

/// The JOIN a federate with `options` sends (PROTOCOL.md §2.1).
[[nodiscard]] ControlMessage join_message(const FederateOptions& options);

class FederateClient {
 public:
  /// How often join() sends JOIN again until START or REFUSED (PROTOCOL.md §2.1).
  static constexpr std::chrono::milliseconds kJoinRepeat{1000};
  /// Speaking a version before 7: how long a resigned federate's control connection must have
  /// been quiet before it is closed (resign()): the coordinator sends nothing more once it has
  /// read the RESIGN, and before version 7 it does not say when that was.
  static constexpr std::chrono::milliseconds kResignQuiet{50};

  FederateClient(zmq::context_t& context, FederateOptions options);
  ~FederateClient();
  FederateClient(const FederateClient&) = delete;
  FederateClient& operator=(const FederateClient&) = delete;

  /// JOIN (again every kJoinRepeat), then wait for START (returned: start tag and every
  /// federate's data endpoint). While it waits, `while_waiting` (when set) is called every 20 ms
  /// (the data plane watches its connections with it: nothing reads the data socket before
  /// START).
  ControlMessage join(std::chrono::milliseconds timeout,
                      const std::function<void()>& while_waiting = {});

  /// NET(tag); `reporting`: how the federate reports its waits from now on (PROTOCOL.md §3.9).
  void send_next_event(const WireTag& tag, Reporting reporting = Reporting::kEveryWait);
  void send_completed(const WireTag& tag);
  /// LTC(tag) carrying the in-transit reports of the messages sent since the previous LTC
  /// (at most kMaxInTransitPerLtc; send the rest as IN_TRANSIT first) and, when given, the
  /// federate's next tag: a NET sent in the same frame (PROTOCOL.md §3.2), with `reporting` as
  /// above (only with a next tag).
  void send_completed(const WireTag& tag, std::vector<std::pair<std::string, WireTag>> in_transit,
                      std::optional<WireTag> next = std::nullopt,
                      Reporting reporting = Reporting::kEveryWait);
  void send_in_transit(const std::string& destination, const WireTag& tag);
  void send_stop_request(const WireTag& proposal);
  void send_stop_reply(const WireTag& proposal);
  /// CHECKPOINT_WRITTEN (PROTOCOL.md §9): this federate's part of the checkpoint at `tag` is on
  /// disk, `bytes` long with checksum `checksum`.
  void send_checkpoint_written(const WireTag& tag, std::uint64_t bytes, std::uint64_t checksum);
  /// RESUMED (PROTOCOL.md §9.6): this federate loaded its part of the checkpoint resuming at
  /// `tag` and reported (IN_TRANSIT) every message the part held in transit.
  void send_resumed(const WireTag& tag);
  /// RESIGN, then reads the control connection until the coordinator's FINISHED or FAILED (at
  /// most heartbeat_timeout, or until the coordinator stops answering heartbeats), so that
  /// closing it cannot reset it while the RESIGN waits unread (PROTOCOL.md §5 rule 6); speaking
  /// a version before 7, until it has been quiet for kResignQuiet (at most
  /// heartbeat_timeout / 4). What arrives meanwhile is not applied: this federate is done.
  void resign();
  /// FAILED(this federate, `reason`): it stops with an error and the coordinator ends the run
  /// (PROTOCOL.md §3.4). Never throws (the coordinator may be gone already).
  void report_failure(const std::string& reason) noexcept;

  /// Waits up to `timeout` for control messages and applies them; true if any arrived.
  bool poll(std::chrono::milliseconds timeout);

  zmq::socket_t& socket() { return socket_; }
  /// How many frames this client has sent on socket() so far. A send lets ZeroMQ take in the
  /// socket's pending commands, so a caller that waits on the socket's ZMQ_FD alone asks the
  /// socket for its events again after one (ReactorFederate::wait_for_sockets).
  [[nodiscard]] std::uint64_t sends() const { return sends_; }
  const FederateOptions& options() const { return options_; }
  const WireTag& granted() const { return granted_; }
  const WireTag& provisional() const { return provisional_; }
  /// Per upstream, data messages with tag < provisional() it has sent to this federate.
  const std::map<std::string, std::uint64_t>& provisional_counts() const {
    return provisional_counts_;
  }
  /// Per upstream, data messages with tag <= granted() it has sent to this federate.
  const std::map<std::string, std::uint64_t>& granted_counts() const { return counts_; }
  const std::optional<WireTag>& stop_tag() const { return stop_tag_; }
  /// The earliest proposal of the stop negotiation (with stop_tag(), from STOP_GRANTED).
  const std::optional<WireTag>& stop_proposal() const { return stop_proposal_; }
  /// A STOP_REQUEST of the coordinator not answered yet (answer_stop_requests = false); taking
  /// it clears it.
  std::optional<WireTag> take_stop_request() {
    std::optional<WireTag> request = stop_request_;
    stop_request_.reset();
    return request;
  }
  /// Whether the coordinator sent REPORT_REQUEST since the last call (PROTOCOL.md §3.9).
  bool take_report_request() {
    const bool requested = report_requested_;
    report_requested_ = false;
    return requested;
  }
  /// The latest FLOOR from the coordinator (PROTOCOL.md §5.1): every stop proposal of the run
  /// still to come is after it. kNever until one came.
  const WireTag& cutoff_floor() const { return cutoff_floor_; }
  /// Throws FederationError once the heartbeat thread lost the coordinator; poll() checks it
  /// too, so a caller that skips poll() (nothing to read) calls this instead.
  void check_coordinator() const;
  /// The smallest stop tag this federate can accept (its next unprocessed tag); used to answer
  /// the coordinator's stop requests.
  void set_stop_floor(const WireTag& tag) { stop_floor_ = tag; }

 private:
  void send(const ControlMessage& message);
  /// Every send on socket() goes through here, so that sends() counts it. Whether the frame was
  /// queued (a dontwait send finds no connection to queue it on: false).
  bool send_frame(const std::string& frame, zmq::send_flags flags);
  /// Records a control message sent or received in the trace, when the process traces.
  void trace_control(trace::Kind kind, const ControlMessage& message, std::size_t bytes);
  void apply(const ControlMessage& message);
  void heartbeat_loop(zmq::socket_t heartbeat);

  FederateOptions options_;
  zmq::context_t& context_;
  zmq::socket_t socket_;
  std::uint64_t sends_ = 0;
  WireTag granted_ = transport::kNever;
  WireTag provisional_ = transport::kNever;
  std::map<std::string, std::uint64_t> counts_;
  std::map<std::string, std::uint64_t> provisional_counts_;
  std::optional<WireTag> stop_tag_;
  std::optional<WireTag> stop_proposal_;
  std::optional<WireTag> stop_request_;
  WireTag stop_floor_ = transport::kNever;
  bool report_requested_ = false;
  WireTag cutoff_floor_ = transport::kNever;
  std::optional<ControlMessage> start_;
  std::atomic<bool> coordinator_lost_{false};  // set by the heartbeat thread (release/acquire)
  std::atomic<bool> stopping_{false};          // tells the heartbeat thread to end
  std::thread heartbeat_thread_;
  trace::NameCache trace_names_;  // tracing/README.md
};

}  // namespace tagflow::coordinator
