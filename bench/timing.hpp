// Timing helpers for benchmarks: repeat a body until a minimum wall time has passed and report
// the best of several such trials, so that one slow trial on a shared machine does not count.
#pragma once

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tagflow::bench {

struct TimingOptions {
  double min_seconds_per_trial = 0.2;
  int trials = 3;
};

/// Seconds per call of `body`, best of `options.trials` trials of at least
/// `options.min_seconds_per_trial` each. `body` must do the same work on every call.
template <class Body>
double seconds_per_call(Body&& body, const TimingOptions& options = {}) {
  using clock = std::chrono::steady_clock;
  double best = 1e300;
  for (int trial = 0; trial < options.trials; ++trial) {
    std::int64_t calls = 0;
    const auto start = clock::now();
    double elapsed = 0.0;
    do {
      body();
      ++calls;
      elapsed = std::chrono::duration<double>(clock::now() - start).count();
    } while (elapsed < options.min_seconds_per_trial);
    best = std::min(best, elapsed / static_cast<double>(calls));
  }
  return best;
}

/// Wall seconds since `start`.
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// CPU time of the calling thread so far, in seconds: single-thread figures use it so that other
/// processes on a shared machine do not slow them down.
inline double thread_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

/// The value at quantile `q` (0 to 1) of `values`: the element at index q * (n - 1), rounded
/// down, of the sorted values; 0 for none.
inline double quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0.0;
  const auto k = static_cast<std::size_t>(q * static_cast<double>(values.size() - 1));
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(k), values.end());
  return values[k];
}

/// Keeps the compiler from optimizing away a value a benchmark computes.
template <class T>
inline void do_not_optimize(const T& value) {
  asm volatile("" : : "r,m"(value) : "memory");
}

}  // namespace tagflow::bench
