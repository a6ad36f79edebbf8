// Pearson's chi-square goodness-of-fit helpers for the replay tests.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

namespace tagflow::replay::testing {

/// Σ (observed − expected)² / expected over categories with expected > 0.
inline double chi_square(const std::vector<double>& observed, const std::vector<double>& expected) {
  double statistic = 0.0;
  for (std::size_t i = 0; i < observed.size(); ++i) {
    if (expected[i] > 0.0) {
      const double d = observed[i] - expected[i];
      statistic += d * d / expected[i];
    }
  }
  return statistic;
}

/// Upper 0.1 % point of the chi-square distribution with `dof` degrees of freedom
/// (Wilson–Hilferty approximation, z = 3.09).
inline double chi_square_critical_999(std::size_t dof) {
  const double k = static_cast<double>(dof);
  const double a = 2.0 / (9.0 * k);
  const double c = 1.0 - a + 3.09 * std::sqrt(a);
  return k * c * c * c;
}

}  // namespace tagflow::replay::testing
