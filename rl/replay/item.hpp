// Item types of a replay table: the declared shape of a transition, the view an inserter hands
// over, and item keys.
//
// A table stores transitions (observation, action, reward, next observation, done) whose
// observation and action shapes and element types are declared once per table in a
// TransitionSpec. Inserters pass a Transition of non-owning byte views; the table copies the
// bytes and never keeps a pointer into the caller's memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tagflow::replay {

/// Identifies one item of one table for its whole life. Keys are assigned by the table on insert,
/// strictly increasing in insertion order, never reused (also across checkpoint and restore).
using ItemKey = std::uint64_t;

/// Element type of an observation or action field.
enum class DType : std::uint8_t { kUInt8 = 0, kInt32 = 1, kInt64 = 2, kFloat32 = 3, kFloat64 = 4 };

/// Size in bytes of one element of `dtype`.
[[nodiscard]] std::size_t dtype_size(DType dtype);
/// "uint8", "int32", "int64", "float32" or "float64".
[[nodiscard]] const char* dtype_name(DType dtype);

/// Shape and element type of one field. An empty shape is a scalar.
struct FieldSpec {
  DType dtype = DType::kFloat32;
  std::vector<std::int64_t> shape;

  /// Number of elements (product of the shape; 1 for a scalar). Throws std::invalid_argument on a
  /// negative dimension.
  [[nodiscard]] std::size_t elements() const;
  [[nodiscard]] std::size_t bytes() const { return elements() * dtype_size(dtype); }
  bool operator==(const FieldSpec& other) const {
    return dtype == other.dtype && shape == other.shape;
  }
};

/// What every transition of a table looks like. Reward is always float32 and done always one
/// byte (0 or 1); next_observation has the observation's spec.
struct TransitionSpec {
  FieldSpec observation;
  FieldSpec action;

  bool operator==(const TransitionSpec& other) const {
    return observation == other.observation && action == other.action;
  }
};

/// A non-owning view of bytes someone else owns, valid for the duration of the call it is
/// passed to.
struct ByteView {
  const std::uint8_t* data = nullptr;
  std::size_t size = 0;
};

/// Views the elements of a vector as bytes.
template <class T>
ByteView bytes_of(const std::vector<T>& values) {
  return ByteView{reinterpret_cast<const std::uint8_t*>(values.data()), values.size() * sizeof(T)};
}

/// One transition to insert. Sizes must match the table's TransitionSpec exactly; the table
/// throws std::invalid_argument otherwise.
struct Transition {
  ByteView observation;
  ByteView action;
  float reward = 0.0F;
  bool done = false;
  ByteView next_observation;
};

}  // namespace tagflow::replay
