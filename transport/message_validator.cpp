#include "transport/message_validator.hpp"

#include <utility>

namespace tagflow::transport {

MessageValidator::MessageValidator(ValidationPolicy policy) : policy_(std::move(policy)) {}

void MessageValidator::allow_port(const std::string& from, std::uint32_t port) {
  ports_[from].insert(port);
}

void MessageValidator::set_completed_tag(const WireTag& tag) {
  if (completed_ < tag) completed_ = tag;
}

DropReason MessageValidator::validate(const std::string& peer, const WireHeader& header,
                                      const std::vector<std::size_t>& frame_sizes) const {
  if (!reads_version(header.version)) return DropReason::kBadVersion;
  if (frame_sizes.size() > policy_.header_limits.max_payload_frames) {
    return DropReason::kTooManyFrames;
  }
  if (frame_sizes.size() != header.sizes.size()) return DropReason::kFrameCountMismatch;
  if (header.kind != MessageKind::kPortValue && !frame_sizes.empty()) {
    return DropReason::kFrameCountMismatch;  // ABSENT and COMPLETED carry no payload
  }
  std::size_t total = 0;
  for (std::size_t i = 0; i < frame_sizes.size(); ++i) {
    if (header.sizes[i] != frame_sizes[i]) return DropReason::kSizeMismatch;
    if (frame_sizes[i] > policy_.max_message_bytes - total) return DropReason::kMessageTooLarge;
    total += frame_sizes[i];
  }
  if (header.from != peer) return DropReason::kUnknownPeer;
  const auto known = ports_.find(header.from);
  if (known == ports_.end()) return DropReason::kUnknownPeer;
  if (header.kind == MessageKind::kCompleted) {
    // About the sender's progress, not an input: any tag is news (or old news), and port 0.
    return header.port == 0 ? DropReason::kNone : DropReason::kUnknownPort;
  }
  if (known->second.count(header.port) == 0) return DropReason::kUnknownPort;
  if (header.tag <= completed_) return DropReason::kTagInPast;
  return DropReason::kNone;
}

}  // namespace tagflow::transport
