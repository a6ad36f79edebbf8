// A non-owning view of contiguous elements (C++17 has no std::span).
#pragma once

#include <cstddef>
#include <type_traits>
#include <vector>

namespace tagflow::envs {

/// Pointer plus length over memory someone else owns. Copying a Span copies the view, not the
/// elements. It is valid only while the memory it points to is; no bounds checks on operator[].
template <typename T>
class Span {
 public:
  constexpr Span() noexcept = default;
  constexpr Span(T* data, std::size_t size) noexcept : data_(data), size_(size) {}
  /// Views a whole vector (non-const elements, or const elements from a const vector).
  template <typename U, typename = std::enable_if_t<std::is_same_v<std::remove_const_t<T>, U>>>
  Span(std::vector<U>& v) noexcept : data_(v.data()), size_(v.size()) {}  // NOLINT: like std::span
  template <typename U, typename = std::enable_if_t<std::is_const_v<T> &&
                                                    std::is_same_v<std::remove_const_t<T>, U>>>
  Span(const std::vector<U>& v) noexcept  // NOLINT: like std::span
      : data_(v.data()), size_(v.size()) {}
  /// A Span<T> converts to a Span<const T>.
  template <typename U, typename = std::enable_if_t<std::is_same_v<const U, T>>>
  constexpr Span(Span<U> other) noexcept  // NOLINT: like std::span
      : data_(other.data()), size_(other.size()) {}

  constexpr T* data() const noexcept { return data_; }
  constexpr std::size_t size() const noexcept { return size_; }
  constexpr bool empty() const noexcept { return size_ == 0; }
  constexpr T& operator[](std::size_t i) const noexcept { return data_[i]; }
  constexpr T* begin() const noexcept { return data_; }
  constexpr T* end() const noexcept { return data_ + size_; }
  /// Elements [offset, offset + count).
  constexpr Span subspan(std::size_t offset, std::size_t count) const noexcept {
    return Span(data_ + offset, count);
  }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace tagflow::envs
