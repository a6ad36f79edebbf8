// libFuzzer target: the wire header decoder and the message validator on arbitrary bytes.
//
// Properties checked beyond "no crash, no sanitizer report": a header that decodes re-encodes to
// a frame that decodes to the same header, bytes after the map come only behind a version-4
// header, and validating it against frame sizes derived from the input never throws.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "transport/message_validator.hpp"
#include "transport/wire_header.hpp"

namespace tt = tagflow::transport;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const tt::DecodedHeader decoded = tt::decode_header(data, size);
  if (decoded.error != tt::DropReason::kNone) return 0;
  if (decoded.map_bytes > size ||
      (decoded.map_bytes != size && decoded.header.version < tt::kFirstInlineHeaderVersion)) {
    std::abort();
  }

  const std::string again = tt::encode_header(decoded.header);
  const tt::DecodedHeader round_trip = tt::decode_header(again.data(), again.size());
  const tt::WireHeader& a = decoded.header;
  const tt::WireHeader& b = round_trip.header;
  if (round_trip.error != tt::DropReason::kNone || a.tag != b.tag || a.from != b.from ||
      a.port != b.port || a.kind != b.kind || a.sizes != b.sizes || a.version != b.version ||
      a.done != b.done) {
    std::abort();
  }

  tt::MessageValidator validator;
  validator.allow_port(a.from, a.port);
  validator.set_completed_tag({0, 0});
  std::vector<std::size_t> frame_sizes;
  for (std::size_t i = 0; i < a.sizes.size(); ++i) {
    frame_sizes.push_back(i < size ? data[i] : 0);
  }
  (void)validator.validate(a.from, a, frame_sizes);
  std::vector<std::size_t> claimed(a.sizes.begin(), a.sizes.end());
  (void)validator.validate(a.from, a, claimed);
  return 0;
}
