// libFuzzer target: the coordinator's control-message decoder (federation/PROTOCOL.md §1) on
// arbitrary bytes.
//
// Beyond "no crash, no sanitizer report": decoding never throws, and a decoded message
// re-encodes to a frame that decodes again and re-encodes to the same bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "federation/control_message.hpp"

namespace tc = tagflow::coordinator;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const tc::ControlDecodeResult decoded = tc::decode_control_explained(data, size);
  if (!decoded.message) {
    if (decoded.error.empty()) std::abort();  // a refusal always says why
    return 0;
  }
  const std::string once = tc::encode_control(*decoded.message);
  const std::optional<tc::ControlMessage> again = tc::decode_control(once.data(), once.size());
  if (!again || again->type != decoded.message->type) std::abort();
  if (tc::encode_control(*again) != once) std::abort();
  return 0;
}
