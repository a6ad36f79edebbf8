// FederationSpec: what the coordinator and the federates must agree on before a run — the
// federate ids, their upstreams with minimum delays, their downstreams, the coordinator address,
// the heartbeat timeout and the CURVE key directory.
//
// It is read from the `federation:` section of a cluster YAML file (format in PROTOCOL.md §0);
// this file is the only place that parses it, so the cluster-config code can take it over.
// Errors throw FederationConfigError with the file, line and key. validate() checks that the
// neighbour structure is consistent (u lists d downstream iff d lists u upstream) and that every
// id is known and unique. Thread-safety: a value type.
#pragma once

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "federation/control_message.hpp"

namespace tagflow::coordinator {

class FederationConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct FederateSpec {
  std::string id;
  std::vector<UpstreamLink> upstreams;
  std::vector<std::string> downstreams;
};

struct FederationSpec {
  std::string address = "tcp://127.0.0.1:7600";
  std::chrono::milliseconds heartbeat_timeout{2000};
  std::chrono::milliseconds join_timeout{30000};
  WireTag start_tag{0, 0};
  /// CURVE + ZAP when set: DIR holds coordinator.{pub,key} and <federate>.{pub,key}.
  std::optional<std::string> keys_dir;
  std::vector<FederateSpec> federates;
  /// The cluster file's digest (16 hex digits, FNV-1a 64 of its bytes); empty for a bare
  /// `federation:` file. A coordinator of version 8 sends its own in START, and a federate whose
  /// file has another ends the run (PROTOCOL.md §2.3).
  std::string file_digest;

  [[nodiscard]] const FederateSpec* find(const std::string& id) const;
  /// True when `to` lists `from` as an upstream with no delay and `from` is reachable from `to`
  /// along connections with no delay: the link is on a zero-delay cycle (PROTOCOL.md §4.5).
  [[nodiscard]] bool zero_delay_cycle_link(const std::string& from, const std::string& to) const;
  /// True when some upstream link of `id` is a zero-delay cycle link.
  [[nodiscard]] bool on_zero_delay_cycle(const std::string& id) const;
  /// Throws FederationConfigError naming the first inconsistency.
  void validate() const;
};

/// Parses the `federation:` section of YAML text; `file` is used in error messages only.
[[nodiscard]] FederationSpec parse_federation_spec(const std::string& yaml_text,
                                                   const std::string& file = "<text>");
/// Reads and parses a cluster file.
[[nodiscard]] FederationSpec load_federation_spec(const std::string& path);

/// "250ms", "1s", "10us", "5ns" or a plain integer of nanoseconds; throws std::invalid_argument.
[[nodiscard]] std::int64_t parse_duration_ns(const std::string& text);

}  // namespace tagflow::coordinator
