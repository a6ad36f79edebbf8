// CoordinatorLink: a launcher's own connection to the coordinator (PROTOCOL.md §8), so that what
// the launcher sees reaches the coordinator's host through the control plane:
//   - report_failure(): a child process died — the coordinator ends the run at once, naming the
//     federate, instead of waiting for its heartbeats to stop;
//   - send_result(): a finished process's result JSON, stored on the coordinator's host for the
//     cluster's summary; the answer says where that summary is.
// Each call opens a DEALER with routing id `FEDERATE#up`, with that federate's CURVE key pair when
// the cluster file has `security.curve` (the coordinator admits a key only for its own federate).
// Errors: CoordinatorLinkError (unreadable keys, a refusal, no answer in time). Not thread-safe.
#pragma once

#include <chrono>
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

 private:
  std::string address_;
  std::optional<std::string> keys_dir_;
};

}  // namespace tagflow::cli
