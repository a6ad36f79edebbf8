// EncodedValue<T>: what a node's port carries — a message (messages.hpp) together with its one
// byte encoding, both immutable.
//
// The reactor that writes an output makes the value once per tag with make_encoded(), which
// encodes it there and then. Everything downstream shares that one object (Encoded<T> is a
// reactors::Shared pointer): local readers in the same process read value(); the channel digest
// hashes bytes(); a federated link sends bytes() as the data message's payload, handed to ZeroMQ
// without a copy, one buffer for every downstream of the output. On the receiving side,
// decode_encoded() decodes straight from the received frame and keeps that frame as bytes(), so
// a value is never encoded twice nor its bytes copied between buffers on its way.
// Contract: bytes() is always encode(value()) (or, received, the bytes value() was decoded from,
// which re-encode to the same). Thread-safety: immutable; any number of readers at once.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <utility>

#include "nodes/messages.hpp"
#include "reactors/value.hpp"
#include "transport/payload.hpp"

namespace tagflow::nodes {

template <class T>
class EncodedValue {
 public:
  /// Encodes `value` (encode(); throws std::invalid_argument for an inconsistent message).
  explicit EncodedValue(T value)
      : value_(std::move(value)), bytes_(transport::Payload::owning(encode(value_))) {}
  /// A value decoded from `bytes`, which it keeps.
  EncodedValue(T value, transport::Payload bytes)
      : value_(std::move(value)), bytes_(std::move(bytes)) {}

  [[nodiscard]] const T& value() const { return value_; }
  [[nodiscard]] const transport::Payload& bytes() const { return bytes_; }

 private:
  template <class>
  friend class EncodedRecycler;

  T value_;
  transport::Payload bytes_;
};

/// How a node port carries a T: shared, immutable, encoded once.
template <class T>
using Encoded = reactors::Shared<EncodedValue<T>>;

/// Encodes `value` once and shares it (the writer of an output calls this once per tag).
template <class T>
[[nodiscard]] Encoded<T> make_encoded(T value) {
  return std::make_shared<const EncodedValue<T>>(std::move(value));
}

/// make_encoded() for a writer that sends a large message every tag (a multi-agent node's
/// observation rows: 5 KB a joint step with four agents, 54 KB with ten): it takes back the
/// storage of a value it made once no reader holds that value any more, so the writer fills the
/// same vectors again instead of allocating and freeing them each time. It keeps the last two
/// values: the output port still holds the newest one until the writer sets the next, the one
/// before is free once its readers are done. The bytes are never taken back (a link may still
/// be sending them). One per output channel, used by its writer only; readers on other threads
/// may hold the values meanwhile.
template <class T>
class EncodedRecycler {
 public:
  /// The storage of a value nobody else holds, to be filled again (its vectors keep their
  /// capacity and their old contents); a new, empty message when there is none.
  [[nodiscard]] T take() {
    for (std::shared_ptr<EncodedValue<T>>& kept : kept_) {
      if (kept == nullptr || kept.use_count() != 1) continue;
      // use_count() is a relaxed read. A copy released at once is a read-modify-write of the
      // count with acquire order: the last reader's release of the value (on any thread)
      // happens before it, and so do that reader's reads (no fence: ThreadSanitizer sees this).
      { const std::shared_ptr<EncodedValue<T>> probe = kept; }
      T value = std::move(kept->value_);
      kept.reset();
      return value;
    }
    return T{};
  }
  /// Encodes `value` once and shares it, as make_encoded() does.
  [[nodiscard]] Encoded<T> make(T value) {
    kept_[1] = std::move(kept_[0]);
    kept_[0] = std::make_shared<EncodedValue<T>>(std::move(value));
    return kept_[0];
  }

 private:
  std::array<std::shared_ptr<EncodedValue<T>>, 2> kept_;  // the newest first
};

/// Decodes `bytes` where they lie and keeps them; nullptr with *error when they do not decode.
template <class T>
[[nodiscard]] Encoded<T> decode_encoded(transport::Payload bytes, std::string* error) {
  T value;
  if (!decode(bytes.bytes(), bytes.size, value, error)) return nullptr;
  return std::make_shared<const EncodedValue<T>>(std::move(value), std::move(bytes));
}

}  // namespace tagflow::nodes
