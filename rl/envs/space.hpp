// Observation and action space descriptions (Gymnasium's Discrete, MultiDiscrete and Box).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tagflow::envs {

/// Element type of a space's samples.
enum class DType { kFloat32, kUInt8, kInt64 };

/// Bytes per element of `dtype`.
std::size_t dtype_size(DType dtype) noexcept;
const char* dtype_name(DType dtype) noexcept;

/// A space, as a plain value.
///  - kDiscrete: one integer in [0, n); shape {} (size 1), dtype kInt64.
///  - kMultiDiscrete: shape {k}, element i in [0, nvec[i]); represented as float32 in
///    observations (Blackjack's tuple of three discretes).
///  - kBox: a tensor of `shape`, elements in [low[i], high[i]] (infinite bounds allowed).
struct Space {
  enum class Kind { kDiscrete, kMultiDiscrete, kBox };

  Kind kind = Kind::kBox;
  DType dtype = DType::kFloat32;
  std::vector<std::int64_t> shape;
  std::int64_t n = 0;              ///< kDiscrete: number of values
  std::vector<std::int64_t> nvec;  ///< kMultiDiscrete: values per element
  std::vector<float> low, high;    ///< kBox: one bound per element

  static Space discrete(std::int64_t n);
  static Space multi_discrete(std::vector<std::int64_t> nvec, DType dtype = DType::kFloat32);
  static Space box(std::vector<std::int64_t> shape, std::vector<float> low, std::vector<float> high,
                   DType dtype = DType::kFloat32);
  /// A box with the same bounds for every element.
  static Space box(std::vector<std::int64_t> shape, float low, float high,
                   DType dtype = DType::kFloat32);

  /// Number of elements in one sample (1 for kDiscrete).
  [[nodiscard]] std::size_t size() const noexcept;
  /// Bytes of one sample.
  [[nodiscard]] std::size_t bytes() const noexcept { return size() * dtype_size(dtype); }
  /// e.g. "Discrete(2)", "Box(-2, 2, (1,), float32)".
  [[nodiscard]] std::string to_string() const;
};

}  // namespace tagflow::envs
