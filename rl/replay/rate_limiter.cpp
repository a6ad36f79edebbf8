#include "rl/replay/rate_limiter.hpp"

#include <cmath>
#include <stdexcept>

namespace tagflow::replay {

RateLimiter::RateLimiter(RateLimiterConfig config) : config_(config) {
  if (!std::isfinite(config.samples_per_insert) || config.samples_per_insert < 0.0) {
    throw std::invalid_argument("RateLimiter: samples_per_insert must be finite and >= 0");
  }
  if (!std::isfinite(config.error_buffer) || config.error_buffer < 0.0) {
    throw std::invalid_argument("RateLimiter: error_buffer must be finite and >= 0");
  }
  if (2.0 * config.error_buffer < config.samples_per_insert) {
    throw std::invalid_argument(
        "RateLimiter: error_buffer must be at least samples_per_insert / 2, or inserts and "
        "samples could both be refused forever");
  }
}

double RateLimiter::diff() const {
  return static_cast<double>(inserts_) * config_.samples_per_insert -
         static_cast<double>(sampled_items_);
}

bool RateLimiter::can_insert(std::size_t table_size) const {
  if (config_.samples_per_insert == 0.0 || table_size < config_.min_size_to_sample) return true;
  const double max_diff =
      config_.samples_per_insert * static_cast<double>(config_.min_size_to_sample) +
      config_.error_buffer;
  return diff() + config_.samples_per_insert <= max_diff;
}

bool RateLimiter::can_sample(std::size_t table_size) const {
  if (table_size < config_.min_size_to_sample || table_size == 0) return false;
  if (config_.samples_per_insert == 0.0) return true;
  const double min_diff =
      config_.samples_per_insert * static_cast<double>(config_.min_size_to_sample) -
      config_.error_buffer;
  return diff() >= min_diff;
}

void RateLimiter::restore(std::uint64_t inserts, std::uint64_t sampled_items) {
  inserts_ = inserts;
  sampled_items_ = sampled_items;
}

}  // namespace tagflow::replay
