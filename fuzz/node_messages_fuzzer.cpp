// libFuzzer target: the decoders of every message between node kinds (nodes/messages.hpp) on
// arbitrary bytes. The first byte picks the message type, the rest is the frame.
//
// Beyond "no crash, no sanitizer report": decode() never throws, and a decoded message
// re-encodes to bytes that decode again and re-encode identically.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "nodes/messages.hpp"

namespace tn = tagflow::nodes;

namespace {

template <class Message>
void check(const std::uint8_t* data, std::size_t size) {
  Message message;
  std::string error;
  if (!tn::decode(data, size, message, &error)) {
    if (error.empty()) std::abort();  // a refusal always says why
    return;
  }
  const tn::Bytes once = tn::encode(message);
  Message again;
  if (!tn::decode(once, again, &error)) std::abort();
  if (tn::encode(again) != once) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t* frame = data + 1;
  const std::size_t frame_size = size - 1;
  switch (data[0] % 9) {
    case 0:
      check<tn::TransitionsMessage>(frame, frame_size);
      break;
    case 1:
      check<tn::SampleBatchMessage>(frame, frame_size);
      break;
    case 2:
      check<tn::PriorityUpdateMessage>(frame, frame_size);
      break;
    case 3:
      check<tn::WeightsMessage>(frame, frame_size);
      break;
    case 4:
      check<tn::ObservationBatchMessage>(frame, frame_size);
      break;
    case 5:
      check<tn::ActionBatchMessage>(frame, frame_size);
      break;
    case 6:
      check<tn::SampleBatchList>(frame, frame_size);
      break;
    case 7:
      check<tn::AgentObservationsMessage>(frame, frame_size);
      break;
    default:
      check<tn::AgentActionsMessage>(frame, frame_size);
      break;
  }
  return 0;
}
