// CoordinatorLink: a launcher's own connection to the coordinator (PROTOCOL.md §8), so that what
// the launcher sees reaches the coordinator's host through the control plane:
//   - report_failure(): a child process died — the coordinator ends the run at once, naming the
//     federate, instead of waiting for its heartbeats to stop;
//   - send_result(): a finished process's result JSON, stored on the coordinator's host for the
//     cluster's summary; the answer says where that summary is;
//   - measure_clock() and send_trace_file(): a traced run's files, and how this host's clock
//     stands to the coordinator's, for the merged trace (tracing/README.md).
// Each call opens a DEALER with routing id `FEDERATE#up`, with that federate's CURVE key pair when
// the cluster file has `security.curve` (the coordinator admits a key only for its own federate).
// Errors: CoordinatorLinkError (unreadable keys, a refusal, no answer in time). Not thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "nodes/cluster/cluster_config.hpp"

namespace tagflow::cli {

class CoordinatorLinkError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class CoordinatorLink {
 public:
  explicit CoordinatorLink(const cluster::ClusterConfig& config);

  /// The coordinator's address, "tcp://HOST:PORT".
  [[nodiscard]] const std::string& address() const { return address_; }

  /// Tells the coordinator that `federate`'s process died (`why`). Waits at most `linger` for the
  /// message to leave; never throws (a launcher reporting a death has nothing better to do).
  void report_failure(const std::string& federate, const std::string& why,
                      std::chrono::milliseconds linger) const noexcept;

  /// Sends the result of `process` with the key of its replica `federate`; returns the
  /// coordinator's answer (where the cluster's summary is written). Throws CoordinatorLinkError.
  std::string send_result(const std::string& federate, const std::string& process,
                          const std::string& json, std::chrono::milliseconds timeout) const;

  /// How far the coordinator's clock is ahead of this host's (CLOCK_REALTIME), from `rounds`
  /// CLOCK_REQUEST round trips (PROTOCOL.md §8.4): the one with the shortest round trip, taken
  /// as symmetric, so the error is at most half of it.
  struct ClockOffset {
    std::int64_t offset_ns = 0;
    std::int64_t error_ns = 0;
  };
  ClockOffset measure_clock(const std::string& federate, int rounds,
                            std::chrono::milliseconds timeout) const;

  /// Hands the file `name` (its bytes) of `federate`'s process to the coordinator in TRACE_PART
  /// pieces of kTracePieceBytes, each answered by TRACE_STORED before the next. Throws
  /// CoordinatorLinkError on a refusal or no answer within `timeout`.
  void send_trace_file(const std::string& federate, const std::string& name,
                       const std::string& bytes, std::chrono::milliseconds timeout) const;
  static constexpr std::size_t kTracePieceBytes = 48 * 1024;

 private:
  std::string address_;
  std::optional<std::string> keys_dir_;
};

}  // namespace tagflow::cli
