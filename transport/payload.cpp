#include "transport/payload.hpp"

#include <cstring>

namespace tagflow::transport {

Payload Payload::copy_of(const void* bytes, std::size_t size) {
  auto buffer = std::shared_ptr<char[]>(new char[size == 0 ? 1 : size]);
  if (size > 0) std::memcpy(buffer.get(), bytes, size);
  Payload payload;
  payload.data = buffer.get();
  payload.size = size;
  payload.owner = std::shared_ptr<const void>(buffer, buffer.get());
  return payload;
}

}  // namespace tagflow::transport
