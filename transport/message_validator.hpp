// MessageValidator: the receiving side's checks on a decoded data message (WIRE.md §3).
//
// It knows which peers may send which ports, the per-message byte cap, and the receiver's
// completed tag (a message at or before it would be in the past). validate() never throws and
// never touches payload bytes, only their sizes. Not thread-safe: configure it, then use it from
// the one thread that receives (set_completed_tag included).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "transport/drop_reason.hpp"
#include "transport/wire_header.hpp"
#include "transport/wire_tag.hpp"

namespace tagflow::transport {

struct ValidationPolicy {
  HeaderLimits header_limits;
  /// Sum of payload frame sizes allowed in one message; also set as ZMQ_MAXMSGSIZE on the
  /// receiving socket so ZeroMQ itself refuses any larger frame before allocating it. 16 MiB:
  /// two connections receiving two whole messages each fit in a process's 64 MiB budget of
  /// held bytes (connection_guard.hpp).
  std::size_t max_message_bytes = std::size_t{16} << 20;
};

class MessageValidator {
 public:
  explicit MessageValidator(ValidationPolicy policy = {});

  const ValidationPolicy& policy() const { return policy_; }

  /// Accepts messages from federate `from` on `port`.
  void allow_port(const std::string& from, std::uint32_t port);
  /// Knows `from` as a sender even with no port allowed: its messages on a port not allowed fail
  /// as kUnknownPort (a known peer that disagrees about ports), not kUnknownPeer.
  void allow_peer(const std::string& from) { (void)ports_[from]; }
  /// Messages with a tag at or before `tag` are refused as kTagInPast. Tags only move forward:
  /// an earlier tag than the current one is ignored.
  void set_completed_tag(const WireTag& tag);
  const WireTag& completed_tag() const { return completed_; }
  /// Reads header versions kOldestWireVersion to `version` only (kWireVersion unless set): a
  /// federate of the previous protocol version reads header 2 alone (WIRE.md §2).
  void set_newest_version(std::uint32_t version) { newest_version_ = version; }
  /// True when it reads header version `version` (WIRE.md §3 step 4).
  [[nodiscard]] bool reads_version(std::uint32_t version) const {
    return version >= kOldestWireVersion && version <= newest_version_;
  }

  /// Checks `header` (already decoded) against the policy and the sizes of the payload frames
  /// that followed it. `peer` is the sender as the socket identified it.
  [[nodiscard]] DropReason validate(const std::string& peer, const WireHeader& header,
                                    const std::vector<std::size_t>& frame_sizes) const;

 private:
  ValidationPolicy policy_;
  std::map<std::string, std::set<std::uint32_t>> ports_;
  WireTag completed_ = kNever;
  std::uint32_t newest_version_ = kWireVersion;
};

}  // namespace tagflow::transport
