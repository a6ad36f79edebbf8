#include "rl/envs/frame_ops.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace tagflow::envs {

void rgb_frame_to_grey(const std::uint8_t* rgb, std::size_t pixels, std::uint8_t* grey) noexcept {
  for (std::size_t i = 0; i < pixels; ++i, rgb += 3) grey[i] = rgb_to_grey(rgb[0], rgb[1], rgb[2]);
}

AreaResizer::AreaResizer(int in_height, int in_width, int out_height, int out_width, int channels)
    : in_width_(in_width), out_height_(out_height), out_width_(out_width), channels_(channels) {
  if (in_height <= 0 || in_width <= 0 || out_height <= 0 || out_width <= 0 || channels <= 0) {
    throw std::invalid_argument("AreaResizer: sizes must be positive");
  }
  row_taps_ = taps(in_height, out_height);
  col_taps_ = taps(in_width, out_width);
  rows_.resize(static_cast<std::size_t>(out_height) * in_width * channels);
}

std::vector<std::vector<AreaResizer::Tap>> AreaResizer::taps(int in_size, int out_size) {
  std::vector<std::vector<Tap>> out(static_cast<std::size_t>(out_size));
  const double scale = static_cast<double>(in_size) / out_size;
  for (int o = 0; o < out_size; ++o) {
    const double begin = o * scale;
    const double end = (o + 1) * scale;
    for (int i = static_cast<int>(std::floor(begin)); i < in_size && i < end; ++i) {
      const double covered = std::min<double>(i + 1, end) - std::max<double>(i, begin);
      if (covered > 1e-9) {
        out[static_cast<std::size_t>(o)].push_back({i, static_cast<float>(covered / scale)});
      }
    }
  }
  return out;
}

void AreaResizer::resize(const std::uint8_t* in, std::uint8_t* out) const {
  const int row_len = in_width_ * channels_;
  // Vertical pass into float rows, then horizontal pass with rounding.
  for (int o = 0; o < out_height_; ++o) {
    float* dst = rows_.data() + static_cast<std::size_t>(o) * row_len;
    std::fill(dst, dst + row_len, 0.0F);
    for (const Tap& t : row_taps_[static_cast<std::size_t>(o)]) {
      const std::uint8_t* __restrict src = in + static_cast<std::size_t>(t.index) * row_len;
      float* __restrict acc = dst;
      const float w = t.weight;
      for (int k = 0; k < row_len; ++k) acc[k] += w * static_cast<float>(src[k]);
    }
  }
  for (int r = 0; r < out_height_; ++r) {
    const float* src = rows_.data() + static_cast<std::size_t>(r) * row_len;
    std::uint8_t* dst = out + static_cast<std::size_t>(r) * out_width_ * channels_;
    for (int c = 0; c < out_width_; ++c) {
      for (int ch = 0; ch < channels_; ++ch) {
        float sum = 0.0F;
        for (const Tap& t : col_taps_[static_cast<std::size_t>(c)]) {
          sum += t.weight * src[t.index * channels_ + ch];
        }
        // sum is in [0, 255]: adding 0.5 and truncating rounds to nearest.
        dst[c * channels_ + ch] = static_cast<std::uint8_t>(std::min(sum + 0.5F, 255.0F));
      }
    }
  }
}

}  // namespace tagflow::envs
