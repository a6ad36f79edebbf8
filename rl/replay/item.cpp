#include "rl/replay/item.hpp"

#include <stdexcept>

namespace tagflow::replay {

std::size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::kUInt8:
      return 1;
    case DType::kInt32:
    case DType::kFloat32:
      return 4;
    case DType::kInt64:
    case DType::kFloat64:
      return 8;
  }
  throw std::invalid_argument("dtype_size: unknown dtype");
}

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kUInt8:
      return "uint8";
    case DType::kInt32:
      return "int32";
    case DType::kInt64:
      return "int64";
    case DType::kFloat32:
      return "float32";
    case DType::kFloat64:
      return "float64";
  }
  return "unknown";
}

std::size_t FieldSpec::elements() const {
  std::size_t count = 1;
  for (std::int64_t dim : shape) {
    if (dim < 0) throw std::invalid_argument("FieldSpec: negative dimension");
    count *= static_cast<std::size_t>(dim);
  }
  return count;
}

}  // namespace tagflow::replay
