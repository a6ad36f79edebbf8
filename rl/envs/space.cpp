#include "rl/envs/space.hpp"

#include <cmath>
#include <sstream>
#include <utility>

namespace tagflow::envs {

std::size_t dtype_size(DType dtype) noexcept {
  switch (dtype) {
    case DType::kFloat32:
      return 4;
    case DType::kUInt8:
      return 1;
    case DType::kInt64:
      return 8;
  }
  return 0;
}

const char* dtype_name(DType dtype) noexcept {
  switch (dtype) {
    case DType::kFloat32:
      return "float32";
    case DType::kUInt8:
      return "uint8";
    case DType::kInt64:
      return "int64";
  }
  return "?";
}

Space Space::discrete(std::int64_t n) {
  Space s;
  s.kind = Kind::kDiscrete;
  s.dtype = DType::kInt64;
  s.n = n;
  return s;
}

Space Space::multi_discrete(std::vector<std::int64_t> nvec, DType dtype) {
  Space s;
  s.kind = Kind::kMultiDiscrete;
  s.dtype = dtype;
  s.shape = {static_cast<std::int64_t>(nvec.size())};
  s.nvec = std::move(nvec);
  return s;
}

Space Space::box(std::vector<std::int64_t> shape, std::vector<float> low, std::vector<float> high,
                 DType dtype) {
  Space s;
  s.kind = Kind::kBox;
  s.dtype = dtype;
  s.shape = std::move(shape);
  s.low = std::move(low);
  s.high = std::move(high);
  return s;
}

Space Space::box(std::vector<std::int64_t> shape, float low, float high, DType dtype) {
  Space s = box(std::move(shape), std::vector<float>{}, std::vector<float>{}, dtype);
  s.low.assign(s.size(), low);
  s.high.assign(s.size(), high);
  return s;
}

std::size_t Space::size() const noexcept {
  if (kind == Kind::kDiscrete) return 1;
  std::size_t n_elements = 1;
  for (std::int64_t d : shape) n_elements *= static_cast<std::size_t>(d);
  return n_elements;
}

namespace {

void write_bound(std::ostream& out, const std::vector<float>& bounds) {
  bool uniform = true;
  for (float b : bounds) uniform = uniform && b == bounds.front();
  if (!uniform) {
    out << "[";
    for (std::size_t i = 0; i < bounds.size(); ++i) out << (i ? ", " : "") << bounds[i];
    out << "]";
  } else if (std::isinf(bounds.front())) {
    out << (bounds.front() < 0 ? "-inf" : "inf");
  } else {
    out << bounds.front();
  }
}

}  // namespace

std::string Space::to_string() const {
  std::ostringstream out;
  if (kind == Kind::kDiscrete) {
    out << "Discrete(" << n << ")";
    return out.str();
  }
  if (kind == Kind::kMultiDiscrete) {
    out << "MultiDiscrete([";
    for (std::size_t i = 0; i < nvec.size(); ++i) out << (i ? ", " : "") << nvec[i];
    out << "])";
    return out.str();
  }
  out << "Box(";
  if (low.empty()) {
    out << "?, ?";
  } else {
    write_bound(out, low);
    out << ", ";
    write_bound(out, high);
  }
  out << ", (";
  for (std::size_t i = 0; i < shape.size(); ++i) out << (i ? ", " : "") << shape[i];
  out << (shape.size() == 1 ? ",)" : ")") << ", " << dtype_name(dtype) << ")";
  return out.str();
}

}  // namespace tagflow::envs
