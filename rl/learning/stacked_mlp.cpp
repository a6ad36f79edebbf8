#include "rl/learning/stacked_mlp.hpp"

#include <ATen/core/Tensor.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/baddbmm.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/from_blob.h>
#include <ATen/ops/relu.h>
#include <ATen/ops/zeros.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <stdexcept>
#include <string>

#include "common/float_bits.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace tagflow::learning {

namespace {

/// y += v · w over `n` floats; eight at a time, a fixed count the compiler turns into vector
/// instructions (y and w never overlap).
void add_scaled(float v, const float* __restrict w, float* __restrict y, std::int64_t n) {
  std::int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    for (int k = 0; k < 8; ++k) y[j + k] += v * w[j + k];
  }
  for (; j < n; ++j) y[j] += v * w[j];
}

/// y[j] = std::max(y[j], 0.0F) for the `n` floats at y, the same floats (-0.0 and NaN stay as
/// they are), four at a time: MAXPS(0, y) returns its second operand for a NaN or two zeros, as
/// std::max does. The scalar std::max loop compiled to a compare and a jump per float, which the
/// signs of a layer's sums mispredicted about half the time.
void rectify(float* y, std::int64_t n) {
  std::int64_t j = 0;
#if defined(__SSE2__)
  const __m128 zero = _mm_setzero_ps();
  for (; j + 4 <= n; j += 4) _mm_storeu_ps(y + j, _mm_max_ps(zero, _mm_loadu_ps(y + j)));
#endif
  for (; j < n; ++j) y[j] = std::max(y[j], 0.0F);
}

/// ATen's baddbmm takes its small-product kernel when in · rows · out is below this.
constexpr std::int64_t kSmallProduct = 400;

/// Outputs j .. j + W - 1 of one row (inputs x, the slot's weights w and biases b): each
/// y = b + x[0]·w[0][j] + x[1]·w[1][j] + ..., summed in order of k in a register. The W sums
/// are independent, so their additions overlap instead of each waiting for the one before.
template <int W>
void output_sums(const float* x, const float* w, const float* b, float* y, std::int64_t j,
                 std::int64_t in, std::int64_t out) {
  float sums[W];
  for (int t = 0; t < W; ++t) sums[t] = b[j + t];
  for (std::int64_t k = 0; k < in; ++k) {
#pragma GCC unroll 4
    for (int t = 0; t < W; ++t) sums[t] += x[k] * w[k * out + j + t];
  }
  for (int t = 0; t < W; ++t) y[j + t] = sums[t];
}

/// The rows of one small_product call four at a time: the inputs, the slot's weights and biases,
/// and the outputs of each.
struct FourRows {
  std::array<const float*, 4> x{}, w{}, b{};
  std::array<float*, 4> y{};
};

/// Outputs j and j + 1 of four rows at once, as output_sums<2> computes each: per row the pair
/// sits in the low half of one SSE register (MULPS and ADDPS round each float as MULSS and ADDSS
/// do), so four rows' sums overlap.
void four_rows_pair(const FourRows& rows, std::int64_t j, std::int64_t in, std::int64_t out) {
#if defined(__SSE2__)
  // Two floats into the low half (__m64 may alias any type).
  const auto pair = [](const float* p) {
    return _mm_loadl_pi(_mm_setzero_ps(), reinterpret_cast<const __m64*>(p));
  };
  __m128 sums[4];
  for (int s = 0; s < 4; ++s) sums[s] = pair(rows.b[s] + j);
  for (std::int64_t k = 0; k < in; ++k) {
    const std::int64_t at = k * out + j;
    // Unrolled, so that the four sums stay in registers (-O2 leaves this loop rolled, and each
    // sum then makes a round trip through memory per k).
#pragma GCC unroll 4
    for (int s = 0; s < 4; ++s) {
      sums[s] = _mm_add_ps(sums[s], _mm_mul_ps(_mm_set1_ps(rows.x[s][k]), pair(rows.w[s] + at)));
    }
  }
  for (int s = 0; s < 4; ++s) _mm_storel_pi(reinterpret_cast<__m64*>(rows.y[s] + j), sums[s]);
#else
  for (int s = 0; s < 4; ++s)
    output_sums<2>(rows.x[s], rows.w[s], rows.b[s], rows.y[s], j, in, out);
#endif
}

/// Every output of one row, four, then two, then one at a time.
void row_sums(const float* x, const float* w, const float* b, float* y, std::int64_t in,
              std::int64_t out) {
  std::int64_t j = 0;
  for (; j + 4 <= out; j += 4) output_sums<4>(x, w, b, y, j, in, out);
  for (; j + 2 <= out; j += 2) output_sums<2>(x, w, b, y, j, in, out);
  if (j < out) output_sums<1>(x, w, b, y, j, in, out);
}

/// y = bias + x · w per slot (x: [slots, rows, in], w: [slots, in, out], bias: [slots, 1, out],
/// y: [slots, rows, out], all contiguous) as ATen's small-product kernel computes it: each output
/// starts from its bias and adds x[k] · w[k][j] in order of k, the product and the sum each rounded
/// to float — the same numbers without the cost of calling ATen (its dispatcher and tensor
/// iterators took longer than a 64 → 2 layer's 128 products). Every output of every row is its
/// own sum, so several are summed side by side: two outputs of four rows (of any slots), or a
/// row's outputs four at a time. GCC contracts nothing into an FMA here: the build targets no FMA
/// unless it sets -ffp-contract=off (CMakeLists.txt).
void small_product(const at::Tensor& bias, const at::Tensor& x, const at::Tensor& w,
                   const at::Tensor& y) {
  const std::int64_t slots = w.size(0), in = w.size(1), out = w.size(2), rows = x.size(1);
  const float* xs = x.data_ptr<float>();
  const float* ws = w.data_ptr<float>();
  const float* bs = bias.data_ptr<float>();
  float* ys = y.data_ptr<float>();
  const auto row_weights = [&](std::int64_t q) { return ws + q / rows * in * out; };
  const auto row_biases = [&](std::int64_t q) { return bs + q / rows * out; };
  const std::int64_t all_rows = slots * rows;
  std::int64_t q = 0;
  for (; q + 4 <= all_rows && out % 2 == 0; q += 4) {
    FourRows four;
    for (int s = 0; s < 4; ++s) {
      four.x[s] = xs + (q + s) * in;
      four.w[s] = row_weights(q + s);
      four.b[s] = row_biases(q + s);
      four.y[s] = ys + (q + s) * out;
    }
    for (std::int64_t j = 0; j < out; j += 2) four_rows_pair(four, j, in, out);
  }
  for (; q < all_rows; ++q) {
    row_sums(xs + q * in, row_weights(q), row_biases(q), ys + q * out, in, out);
  }
}

}  // namespace

struct StackedMlp::Impl {
  std::vector<at::Tensor> weights;  // per layer: [slots, in, out] (transposed for bmm)
  std::vector<at::Tensor> biases;   // per layer: [slots, 1, out]
  // Per layer, its last output [slots, rows, out], written over by the next pass of as many rows
  // (baddbmm_out or small_product, relu_: the arithmetic of baddbmm and relu, so the same
  // numbers): a pass allocates
  // no tensor. A result is read before the next pass (one caller at a time, as the class says).
  mutable std::vector<at::Tensor> outputs;

  at::Tensor& output(std::size_t layer, std::int64_t rows) const {
    at::Tensor& y = outputs[layer];
    if (!y.defined() || y.size(1) != rows) {
      y = at::empty({weights[layer].size(0), rows, weights[layer].size(2)}, at::kFloat);
    }
    return y;
  }

  const at::Tensor& forward(const float* inputs, std::size_t slots, std::int64_t rows,
                            int in) const {
    const at::NoGradGuard no_grad;
    return later_layers(first_layer(inputs, slots, rows, in));
  }

  // One row per slot, read from the non-zero floats of a longer array: slot s's row is its floats
  // first + s·in .. first + (s+1)·in.
  const at::Tensor& forward(const SparseFloats& inputs, std::size_t first, std::size_t slots,
                            int in) const {
    const at::NoGradGuard no_grad;
    return later_layers(first_layer(inputs, first, slots, in));
  }

  const at::Tensor& later_layers(const at::Tensor& first) const {
    const at::Tensor* x = &first;
    for (std::size_t l = 1; l < weights.size(); ++l) {
      at::Tensor& y = output(l, x->size(1));
      if (x->size(2) * x->size(1) * y.size(2) < kSmallProduct) {
        small_product(biases[l], *x, weights[l], y);
      } else {
        at::baddbmm_out(y, biases[l], *x, weights[l]);
      }
      if (l + 1 < weights.size()) at::relu_(y);
      x = &y;
    }
    return *x;  // contiguous: every output is made by at::empty
  }

  // The first layer as a sum over each row's non-zero inputs only, in input order: the
  // multi-agent observations it serves are mostly zeros (a TrafficJunction10 row sets a few dozen
  // of its 1,350 floats), so this is a few dozen scaled weight rows per row instead of a full
  // product. Each row's numbers depend on that row and its slot's weights only.
  const at::Tensor& first_layer(const float* inputs, std::size_t slots, std::int64_t rows,
                                int in) const {
    const at::Tensor& weight = weights.front();
    const std::int64_t out = weight.size(2);
    const at::Tensor& h = output(0, rows);
    float* y = h.data_ptr<float>();
    const float* w = weight.data_ptr<float>();
    const float* b = biases.front().data_ptr<float>();
    const bool relu = weights.size() > 1;
    for (std::size_t slot = 0; slot < slots; ++slot) {
      const float* slot_weights = w + slot * static_cast<std::size_t>(in * out);
      for (std::int64_t r = 0; r < rows; ++r, y += out, inputs += in) {
        std::copy(b, b + out, y);
        for (int start = 0; start < in; start += static_cast<int>(kFloatBlock)) {
          const auto n =
              static_cast<std::size_t>(std::min(in - start, static_cast<int>(kFloatBlock)));
          // Zeros of either sign are skipped.
          for (std::uint32_t mask = float_mask(inputs + start, n, 0x80000000U); mask != 0;
               mask &= mask - 1) {
            const int i = start + lowest_bit(mask);
            add_scaled(inputs[i], slot_weights + static_cast<std::int64_t>(i) * out, y, out);
          }
        }
        if (relu) {
          rectify(y, out);
        }
      }
      b += out;
    }
    return h;
  }

  // first_layer's sums from the listed non-zero floats: the same floats in the same order (the
  // positions ascend), so the same numbers. Zeros listed (-0.0 of an encoding) are skipped as
  // first_layer skips them.
  const at::Tensor& first_layer(const SparseFloats& inputs, std::size_t first, std::size_t slots,
                                int in) const {
    const at::Tensor& weight = weights.front();
    const std::int64_t out = weight.size(2);
    const at::Tensor& h = output(0, 1);
    float* y = h.data_ptr<float>();
    const float* w = weight.data_ptr<float>();
    const float* b = biases.front().data_ptr<float>();
    const bool relu = weights.size() > 1;
    const auto width = static_cast<std::size_t>(in);
    std::size_t k = inputs.first_at_or_after(static_cast<std::uint32_t>(first));
    for (std::size_t slot = 0; slot < slots; ++slot, y += out, b += out) {
      const float* slot_weights = w + slot * width * static_cast<std::size_t>(out);
      const std::size_t row_start = first + slot * width, row_end = row_start + width;
      std::copy(b, b + out, y);
      for (; k < inputs.count && inputs.position(k) < row_end; ++k) {
        const float v = inputs.value(k);
        if (v == 0.0F) continue;
        const std::size_t i = inputs.position(k) - row_start;
        add_scaled(v, slot_weights + i * static_cast<std::size_t>(out), y, out);
      }
      if (relu) {
        rectify(y, out);
      }
    }
    return h;
  }
};

namespace {

/// The argmax (ties: lowest) of each of the `n` rows of `scores` (n × width) into `actions`.
void argmax_rows(const at::Tensor& scores, std::int64_t n, std::int64_t width,
                 std::int64_t* actions) {
  const float* s = scores.data_ptr<float>();
  for (std::int64_t row = 0; row < n; ++row) {
    std::int64_t best = 0;
    for (std::int64_t a = 1; a < width; ++a) {
      if (s[row * width + a] > s[row * width + best]) best = a;
    }
    actions[row] = best;
  }
}

}  // namespace

StackedMlp::StackedMlp(const MlpSpec& spec, std::size_t slots, std::int64_t rows_per_slot,
                       std::uint64_t seed)
    : spec_(spec), slots_(slots), rows_(rows_per_slot), impl_(std::make_unique<Impl>()) {
  spec_.validate();
  if (slots == 0 || rows_per_slot < 1) {
    throw std::invalid_argument("StackedMlp: needs at least one slot and one row per slot");
  }
  for (const LayerSlice& s : layer_slices(spec_)) {
    impl_->weights.push_back(at::zeros({static_cast<std::int64_t>(slots), s.in, s.out}));
    impl_->biases.push_back(at::zeros({static_cast<std::int64_t>(slots), 1, s.out}));
  }
  impl_->outputs.resize(impl_->weights.size());
  const std::vector<float> initial = init_mlp_parameters(spec_, seed);
  for (std::size_t slot = 0; slot < slots; ++slot) load(slot, initial);
}

StackedMlp::~StackedMlp() = default;
StackedMlp::StackedMlp(StackedMlp&&) noexcept = default;
StackedMlp& StackedMlp::operator=(StackedMlp&&) noexcept = default;

void StackedMlp::load(std::size_t slot, const std::vector<float>& parameters) {
  if (slot >= slots_) {
    throw std::invalid_argument("StackedMlp: no slot " + std::to_string(slot) + " of " +
                                std::to_string(slots_));
  }
  if (static_cast<std::int64_t>(parameters.size()) != spec_.parameter_count()) {
    throw std::invalid_argument("StackedMlp: MLP " + spec_.to_string() + " needs " +
                                std::to_string(spec_.parameter_count()) + " parameters, got " +
                                std::to_string(parameters.size()));
  }
  const at::NoGradGuard no_grad;
  const std::vector<LayerSlice> slices = layer_slices(spec_);
  const auto s = static_cast<std::int64_t>(slot);
  for (std::size_t l = 0; l < slices.size(); ++l) {
    const LayerSlice& layer = slices[l];
    const at::Tensor weight =
        at::from_blob(const_cast<float*>(parameters.data() + layer.weight_offset),
                      {layer.out, layer.in}, at::kFloat);
    impl_->weights[l][s].copy_(weight.t());
    const at::Tensor bias = at::from_blob(const_cast<float*>(parameters.data() + layer.bias_offset),
                                          {1, layer.out}, at::kFloat);
    impl_->biases[l][s].copy_(bias);
  }
}

std::vector<float> StackedMlp::scores(const float* inputs) const {
  const at::Tensor& out = impl_->forward(inputs, slots_, rows_, spec_.input_size);
  std::vector<float> result(static_cast<std::size_t>(out.numel()));
  std::memcpy(result.data(), out.data_ptr<float>(), result.size() * sizeof(float));
  return result;
}

void StackedMlp::act(const float* inputs, std::int64_t* actions) const {
  act(inputs, rows_, actions);
}

void StackedMlp::act(const float* inputs, std::int64_t rows, std::int64_t* actions) const {
  if (rows < 1) throw std::invalid_argument("StackedMlp: act needs at least one row per slot");
  const at::Tensor& out = impl_->forward(inputs, slots_, rows, spec_.input_size);
  argmax_rows(out, static_cast<std::int64_t>(slots_) * rows, spec_.output_size, actions);
}

void StackedMlp::act(const SparseFloats& inputs, std::size_t first, std::int64_t* actions) const {
  const at::Tensor& out = impl_->forward(inputs, first, slots_, spec_.input_size);
  argmax_rows(out, static_cast<std::int64_t>(slots_), spec_.output_size, actions);
}

}  // namespace tagflow::learning
