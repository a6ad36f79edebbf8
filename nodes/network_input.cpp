#include "nodes/network_input.hpp"

#include <stdexcept>
#include <string>

namespace tagflow::nodes {
namespace {

void check_length(std::size_t have, std::size_t elements, ObservationType type) {
  if (have != elements) {
    throw std::invalid_argument(std::string("network input: ") + observation_type_name(type) +
                                " observations hold " + std::to_string(have) +
                                " values, expected " + std::to_string(elements));
  }
}

}  // namespace

ObservationType observation_type_of(envs::DType dtype) {
  switch (dtype) {
    case envs::DType::kFloat32:
      return ObservationType::kFloat32;
    case envs::DType::kUInt8:
      return ObservationType::kUInt8;
    case envs::DType::kInt64:
      break;
  }
  throw std::invalid_argument(std::string("observations of dtype ") + envs::dtype_name(dtype) +
                              " are not supported (float32 or uint8)");
}

void pixels_to_network_input(const std::uint8_t* pixels, std::size_t count, float* out) {
  for (std::size_t i = 0; i < count; ++i) out[i] = static_cast<float>(pixels[i]) * kPixelScale;
}

const float* network_input(ObservationType type, const std::vector<float>& floats,
                           const std::vector<std::uint8_t>& pixels, std::size_t elements,
                           std::vector<float>& scratch) {
  if (type == ObservationType::kFloat32) {
    check_length(floats.size(), elements, type);
    return floats.data();
  }
  check_length(pixels.size(), elements, type);
  scratch.resize(elements);
  pixels_to_network_input(pixels.data(), elements, scratch.data());
  return scratch.data();
}

const float* network_input(const envs::VectorEnv& env, std::vector<float>& scratch) {
  if (observation_type_of(env.spec().observation_space.dtype) == ObservationType::kFloat32) {
    return env.observations().data();
  }
  const auto pixels = env.observations_u8();
  scratch.resize(pixels.size());
  pixels_to_network_input(pixels.data(), pixels.size(), scratch.data());
  return scratch.data();
}

void assign_network_input(ObservationType type, const std::vector<float>& floats,
                          const std::vector<std::uint8_t>& pixels, std::size_t elements,
                          std::vector<float>& out) {
  if (type == ObservationType::kFloat32) {
    check_length(floats.size(), elements, type);
    out.assign(floats.begin(), floats.end());
    return;
  }
  check_length(pixels.size(), elements, type);
  out.resize(elements);
  pixels_to_network_input(pixels.data(), elements, out.data());
}

}  // namespace tagflow::nodes
