// Image operations of Atari preprocessing: RGB to grey, and area-averaging resize.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tagflow::envs {

/// Luma of an RGB pixel, ITU-R BT.601 weights (0.299, 0.587, 0.114) in 16-bit fixed point,
/// rounded to nearest.
inline std::uint8_t rgb_to_grey(std::uint8_t r, std::uint8_t g, std::uint8_t b) noexcept {
  return static_cast<std::uint8_t>((19595U * r + 38470U * g + 7471U * b + 32768U) >> 16);
}

/// Converts an H×W×3 frame into an H×W grey image.
void rgb_frame_to_grey(const std::uint8_t* rgb, std::size_t pixels, std::uint8_t* grey) noexcept;

/// Resizes images of in_height×in_width×channels to out_height×out_width×channels by averaging
/// the input area each output pixel covers (fractional pixels weighted by their overlap), as
/// OpenCV's INTER_AREA does when shrinking; results are rounded to the nearest integer. The
/// weight tables are built once in the constructor. resize() writes a scratch buffer: one thread
/// at a time per resizer.
class AreaResizer {
 public:
  AreaResizer(int in_height, int in_width, int out_height, int out_width, int channels);

  void resize(const std::uint8_t* in, std::uint8_t* out) const;

  [[nodiscard]] int out_height() const noexcept { return out_height_; }
  [[nodiscard]] int out_width() const noexcept { return out_width_; }

 private:
  struct Tap {
    int index;
    float weight;
  };
  /// For each output index, the input indices it covers and their weights (summing to 1).
  static std::vector<std::vector<Tap>> taps(int in_size, int out_size);

  int in_width_, out_height_, out_width_, channels_;  // the input height only sizes row_taps_
  std::vector<std::vector<Tap>> row_taps_;
  std::vector<std::vector<Tap>> col_taps_;
  mutable std::vector<float> rows_;  // scratch: out_height × in_width × channels
};

}  // namespace tagflow::envs
