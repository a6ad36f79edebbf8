// message_bytes(): how many bytes an actor-mode message carries, for the per-peer transport
// metrics (tagflow_transport_sent_bytes_total / _received_bytes_total, monitoring/README.md).
//
// The count walks the same `inspect` overload CAF serializes the message with
// (actors/control_messages.hpp for control messages, nodes/actor_messages.hpp for data), so it
// follows the wire fields as they change: a numeric array counts element size × length, a string
// its length, a scalar or enum its size. CAF's own framing (type names, length prefixes, actor
// addresses) is not counted: "bytes" in actor mode is the payload the message carries. No copy and
// no allocation.
//
// Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

#include <caf/meta/annotation.hpp>

namespace tagflow::actors {

/// A CAF 0.17 inspector that only adds up field sizes.
class ByteCounter {
 public:
  using result_type = void;
  static constexpr bool reads_state = true;
  static constexpr bool writes_state = false;

  template <class... Ts>
  void operator()(Ts&&... fields) {
    (add(fields), ...);
  }
  [[nodiscard]] std::size_t bytes() const { return bytes_; }

 private:
  template <class T>
  void add(const T& field) {
    if constexpr (std::is_base_of_v<caf::meta::annotation, T>) {
      return;  // type names and other annotations are not payload
    } else if constexpr (std::is_arithmetic_v<T> || std::is_enum_v<T>) {
      bytes_ += sizeof(T);
    } else if constexpr (std::is_same_v<T, std::string>) {
      bytes_ += field.size();
    } else {
      static_assert(std::is_arithmetic_v<typename T::value_type>, "arrays of numbers only");
      bytes_ += field.size() * sizeof(typename T::value_type);
    }
  }
  std::size_t bytes_ = 0;
};

/// The payload bytes of `message` (see the header comment).
template <class Message>
[[nodiscard]] std::size_t message_bytes(const Message& message) {
  ByteCounter counter;
  inspect(counter, const_cast<Message&>(message));  // ByteCounter only reads
  return counter.bytes();
}

}  // namespace tagflow::actors
