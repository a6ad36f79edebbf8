// Text values as transport::Payload for the reactor federation tests: NetworkSender and
// NetworkReceiver carry payloads (shared bytes), the test programs write and read text.
#pragma once

#include <string>
#include <utility>

#include "transport/payload.hpp"

namespace tagflow::coordinator::testing {

/// `text` as a payload that owns it.
inline transport::Payload payload(std::string text) {
  return transport::Payload::owning(std::move(text));
}
/// The bytes of `value` as text.
inline std::string text(const transport::Payload& value) { return std::string(value.view()); }

}  // namespace tagflow::coordinator::testing
