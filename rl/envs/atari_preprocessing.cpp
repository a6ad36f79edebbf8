#include "rl/envs/atari_preprocessing.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "rl/envs/pixel_pong.hpp"
#include "rl/envs/random.hpp"

namespace tagflow::envs {
namespace {

const Space& checked_rgb_space(const Env* inner) {
  if (inner == nullptr) throw std::invalid_argument("AtariPreprocessing needs an env");
  const Space& s = inner->spec().observation_space;
  if (s.dtype != DType::kUInt8 || s.shape.size() != 3 || s.shape[2] != 3) {
    throw std::invalid_argument("AtariPreprocessing needs H×W×3 uint8 frames, " + inner->spec().id +
                                " has " + s.to_string());
  }
  return s;
}

void check_options(const AtariOptions& o) {
  if (o.noop_max < 0 || o.frame_skip < 1 || o.screen_size < 1 || o.frame_stack < 1) {
    throw std::invalid_argument(
        "AtariPreprocessing: noop_max >= 0, frame_skip >= 1, screen_size >= 1 and frame_stack "
        ">= 1 are required");
  }
}

}  // namespace

AtariPreprocessing::AtariPreprocessing(std::unique_ptr<Env> inner, const AtariOptions& options,
                                       std::string id)
    : inner_(std::move(inner)),
      options_((check_options(options), options)),
      resizer_(static_cast<int>(checked_rgb_space(inner_.get()).shape[0]),
               static_cast<int>(inner_->spec().observation_space.shape[1]), options.screen_size,
               options.screen_size, options.grayscale ? 1 : 3),
      in_height_(static_cast<int>(inner_->spec().observation_space.shape[0])),
      in_width_(static_cast<int>(inner_->spec().observation_space.shape[1])),
      channels_(options.grayscale ? 1 : 3) {
  const auto size = static_cast<std::int64_t>(options.screen_size);
  std::vector<std::int64_t> shape = {options.frame_stack, size, size};
  if (!options.grayscale) shape.push_back(3);
  spec_.id = std::move(id);
  spec_.observation_space = Space::box(shape, 0.0F, 255.0F, DType::kUInt8);
  spec_.action_space = inner_->spec().action_space;
  spec_.reward_threshold = inner_->spec().reward_threshold;
  raw_.resize(inner_->spec().observation_space.size());
  const std::size_t pixels = static_cast<std::size_t>(in_height_) * in_width_;
  pool_[0].assign(pixels * channels_, 0);
  pool_[1].assign(pixels * channels_, 0);
  stack_.assign(spec_.observation_space.size(), 0);
}

void AtariPreprocessing::grab(int slot) {
  std::vector<std::uint8_t>& dst = pool_[slot];
  if (channels_ == 1) {
    rgb_frame_to_grey(raw_.data(), dst.size(), dst.data());
  } else {
    std::memcpy(dst.data(), raw_.data(), dst.size());
  }
}

void AtariPreprocessing::emit(std::uint8_t* observation) {
  if (options_.frame_skip > 1) {
    for (std::size_t i = 0; i < pool_[0].size(); ++i) {
      pool_[0][i] = std::max(pool_[0][i], pool_[1][i]);
    }
  }
  const std::size_t frame = stack_.size() / static_cast<std::size_t>(options_.frame_stack);
  newest_ = (newest_ + 1) % static_cast<std::size_t>(options_.frame_stack);
  resizer_.resize(pool_[0].data(), stack_.data() + newest_ * frame);
  for (int k = 0; k < options_.frame_stack; ++k) {
    // Output slot k holds the k-th oldest frame.
    const std::size_t ring = (newest_ + 1 + static_cast<std::size_t>(k)) %
                             static_cast<std::size_t>(options_.frame_stack);
    std::memcpy(observation + static_cast<std::size_t>(k) * frame, stack_.data() + ring * frame,
                frame);
  }
}

void AtariPreprocessing::reset_impl(void* observation) {
  inner_->reset(rng()(), Span<std::uint8_t>(raw_));
  const std::int64_t noops =
      options_.noop_max > 0 ? 1 + uniform_index(rng(), options_.noop_max) : 0;
  for (std::int64_t i = 0; i < noops; ++i) {
    const StepResult r = inner_->step(Action::discrete(0), Span<std::uint8_t>(raw_));
    if (r.terminated || r.truncated) inner_->reset(std::nullopt, Span<std::uint8_t>(raw_));
  }
  grab(0);
  std::fill(pool_[1].begin(), pool_[1].end(), 0);
  // Fill the whole stack with the reset frame.
  auto* out = static_cast<std::uint8_t*>(observation);
  emit(out);
  const std::size_t frame = stack_.size() / static_cast<std::size_t>(options_.frame_stack);
  for (int k = 0; k < options_.frame_stack; ++k) {
    std::memcpy(stack_.data() + static_cast<std::size_t>(k) * frame,
                stack_.data() + newest_ * frame, frame);
    std::memcpy(out + static_cast<std::size_t>(k) * frame, stack_.data() + newest_ * frame, frame);
  }
}

StepResult AtariPreprocessing::step_impl(const Action& action, void* observation) {
  StepResult total;
  for (int t = 0; t < options_.frame_skip; ++t) {
    const StepResult r = inner_->step(action, Span<std::uint8_t>(raw_));
    total.reward += r.reward;
    total.terminated = r.terminated;
    total.truncated = r.truncated;
    if (r.terminated || r.truncated) break;
    if (t == options_.frame_skip - 2) grab(1);
    if (t == options_.frame_skip - 1) grab(0);
  }
  emit(static_cast<std::uint8_t*>(observation));
  return total;
}

PixelPongAtari::PixelPongAtari() : PixelPongAtari(AtariOptions{}) {}

PixelPongAtari::PixelPongAtari(const AtariOptions& options)
    : wrapped_(std::make_unique<AtariPreprocessing>(std::make_unique<PixelPong>(), options,
                                                    "PixelPong-v0")) {}

void PixelPongAtari::reset_impl(void* observation) {
  const Space& s = spec().observation_space;
  wrapped_->reset(rng()(), Span<std::uint8_t>(static_cast<std::uint8_t*>(observation), s.size()));
}

StepResult PixelPongAtari::step_impl(const Action& action, void* observation) {
  const Space& s = spec().observation_space;
  return wrapped_->step(action,
                        Span<std::uint8_t>(static_cast<std::uint8_t*>(observation), s.size()));
}

}  // namespace tagflow::envs
