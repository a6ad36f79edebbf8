// EncodedValue<T>: what a node's port carries — a message (messages.hpp) together with its one
// byte encoding, both immutable.
//
// The reactor that writes an output makes the value once per tag with make_encoded() (or an
// EncodedRecycler, below), which encodes it there and then. Everything downstream shares that one
// object (Encoded<T> is a reactors::Shared pointer): local readers in the same process read
// value(); the channel digest hashes bytes(); a federated link sends bytes() as the data
// message's payload, handed to ZeroMQ without a copy, one buffer for every downstream of the
// output (a value of at most 16 KiB is copied once, behind its header, transport/WIRE.md §2). On
// the receiving side, decode_encoded() decodes straight from the received frame and keeps that
// frame as bytes(), so a value is never encoded twice.
// Contract: bytes() is always encode(value()) (or, received, the bytes value() was decoded from,
// which re-encode to the same). Thread-safety: immutable while shared; any number of readers at
// once. (An EncodedRecycler writes a value again only once nobody else holds it.)
#pragma once

#include <array>
#include <atomic>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "nodes/messages.hpp"
#include "reactors/value.hpp"
#include "transport/payload.hpp"

namespace tagflow::nodes {

namespace detail {

/// Whether `held` is the only holder of its object, and if so, with every other holder's release
/// (on any thread) happening before the return. use_count() alone is a relaxed read of the count
/// that the other holders' releases wrote (each an acquire-release decrement); the acquire fence
/// after it makes the last of them, and so their reads of the object, come before whatever the
/// caller writes next. The fence costs no instruction on x86; the alternative, a copy released at
/// once, was two locked read-modify-writes per look (a message's encoding looks twice). Under
/// ThreadSanitizer, which GCC 12 does not let see fences, that copy takes the fence's place.
template <class U>
[[nodiscard]] bool sole_holder(const std::shared_ptr<U>& held) {
  if (held == nullptr || held.use_count() != 1) return false;
#if defined(__SANITIZE_THREAD__)
  { const std::shared_ptr<U> probe = held; }
#else
  std::atomic_thread_fence(std::memory_order_acquire);
#endif
  return true;
}

}  // namespace detail

template <class T>
class EncodedValue {
 public:
  /// Encodes `value` (encode(); throws std::invalid_argument for an inconsistent message).
  explicit EncodedValue(T value) : value_(std::move(value)) { encode_fresh(); }
  /// A value decoded from `bytes`, which it keeps.
  EncodedValue(T value, transport::Payload bytes)
      : value_(std::move(value)), bytes_(std::move(bytes)) {}

  [[nodiscard]] const T& value() const { return value_; }
  [[nodiscard]] const transport::Payload& bytes() const { return bytes_; }

 private:
  template <class>
  friend class EncodedRecycler;

  EncodedValue() = default;  // an EncodedRecycler's storage, encoded before it is shared

  /// Encodes value_ into a buffer of its own, which bytes_ then shares.
  void encode_fresh() {
    auto buffer = std::make_shared<Bytes>(encode(value_));
    buffer_ = buffer.get();
    bytes_.data = buffer->data();
    bytes_.size = buffer->size();
    bytes_.owner = std::move(buffer);
  }

  /// Encodes value_ again (an EncodedRecycler, which alone holds this value, refilled it). The
  /// bytes go over the old ones only when this value alone holds those too: no link still
  /// sending them, no reader keeping a copy; else into a new buffer, the old one left to them.
  void encode_again() {
    // Not while a link still sends the old bytes or a reader keeps a copy of them.
    if (buffer_ == nullptr || !detail::sole_holder(bytes_.owner)) {
      encode_fresh();
      return;
    }
    try {
      Bytes written = encode(value_, std::move(*buffer_));
      *buffer_ = std::move(written);
    } catch (...) {
      // The old bytes went with the storage: no bytes until the message is encoded again.
      bytes_ = {};
      buffer_ = nullptr;
      throw;
    }
    bytes_.data = buffer_->data();
    bytes_.size = buffer_->size();
  }

  T value_;
  transport::Payload bytes_;
  Bytes* buffer_ = nullptr;  // the buffer bytes_ shares, where this value made it (else nullptr)
};

/// How a node port carries a T: shared, immutable, encoded once.
template <class T>
using Encoded = reactors::Shared<EncodedValue<T>>;

/// Encodes `value` once and shares it (the writer of an output calls this once per tag).
template <class T>
[[nodiscard]] Encoded<T> make_encoded(T value) {
  return std::make_shared<const EncodedValue<T>>(std::move(value));
}

/// make_encoded() for a writer that sends a message every tag (a multi-agent node's observation
/// rows, 5 KB a joint step with four agents and 54 KB with ten; an inference server's answers):
/// it writes a value it made before again once nobody else holds that value, so that a tag's
/// message costs no allocation: the message's vectors are filled again, and its bytes are written
/// over the old ones when nobody holds those either (a link may still be sending them: then they
/// go to a new buffer). It keeps the last two values: the output port still holds the newest one
/// until the writer sets the next, the one before is free once its readers are done. One per
/// output channel, used by its writer only; readers on other threads may hold the values
/// meanwhile. T needs an encode(message, storage) (nodes/messages.hpp).
template <class T>
class EncodedRecycler {
 public:
  /// The message to fill for the next value: that of a value made before that nobody else holds
  /// any more (its vectors keep their capacity and their old contents), or a new, empty one. The
  /// same message until share(); one never shared is offered again.
  [[nodiscard]] T& next() {
    if (filling_ == nullptr) filling_ = free_or_new();
    return filling_->value_;
  }
  /// Encodes the message next() returned and shares it, as make_encoded() does. Throws
  /// std::logic_error without a next() before it, and std::invalid_argument for an inconsistent
  /// message (which stays to be filled again).
  [[nodiscard]] Encoded<T> share() {
    if (filling_ == nullptr) throw std::logic_error("EncodedRecycler::share() without next()");
    filling_->encode_again();
    if (kept_[0] != nullptr) kept_[1] = std::move(kept_[0]);
    kept_[0] = std::move(filling_);
    return kept_[0];
  }

 private:
  std::shared_ptr<EncodedValue<T>> free_or_new() {
    for (std::shared_ptr<EncodedValue<T>>& kept : kept_) {
      if (detail::sole_holder(kept)) return std::move(kept);
    }
    return std::shared_ptr<EncodedValue<T>>(new EncodedValue<T>());
  }

  std::array<std::shared_ptr<EncodedValue<T>>, 2> kept_;  // the newest first
  std::shared_ptr<EncodedValue<T>> filling_;              // next()'s, until share()
};

/// Decodes `bytes` where they lie and keeps them; nullptr with *error when they do not decode.
template <class T>
[[nodiscard]] Encoded<T> decode_encoded(transport::Payload bytes, std::string* error) {
  T value;
  if (!decode(bytes.bytes(), bytes.size, value, error)) return nullptr;
  return std::make_shared<const EncodedValue<T>>(std::move(value), std::move(bytes));
}

}  // namespace tagflow::nodes
