#include "bench/report.hpp"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "common/atomic_file.hpp"

namespace tagflow::bench {

BenchReport::BenchReport(std::string benchmark) : benchmark_(std::move(benchmark)) {}

void BenchReport::add(const std::string& name, double value, const std::string& unit) {
  for (const BenchResult& r : results_) {
    if (r.name == name) throw std::invalid_argument("benchmark result '" + name + "' added twice");
  }
  results_.push_back(BenchResult{name, value, unit});
}

double BenchReport::add_ratio(const std::string& label, const std::string& numerator,
                              const std::string& denominator) {
  const double ratio = value(numerator) / value(denominator);
  ratios_[label] = ratio;
  return ratio;
}

double BenchReport::value(const std::string& name) const {
  for (const BenchResult& r : results_) {
    if (r.name == name) return r.value;
  }
  throw std::out_of_range("benchmark '" + benchmark_ + "' has no result named '" + name + "'");
}

std::string BenchReport::table() const {
  std::size_t width = 6;
  for (const BenchResult& r : results_) width = std::max(width, r.name.size());
  for (const auto& [label, ratio] : ratios_) width = std::max(width, label.size());
  std::ostringstream out;
  out << "benchmark: " << benchmark_ << "\n";
  out << std::left << std::setw(static_cast<int>(width)) << "result"
      << "  " << std::right << std::setw(14) << "value"
      << "  unit\n";
  for (const BenchResult& r : results_) {
    out << std::left << std::setw(static_cast<int>(width)) << r.name << "  " << std::right
        << std::setw(14) << std::setprecision(4) << std::defaultfloat << r.value << "  " << r.unit
        << "\n";
  }
  if (!ratios_.empty()) {
    out << std::left << std::setw(static_cast<int>(width)) << "ratio"
        << "  " << std::right << std::setw(14) << "x"
        << "\n";
    for (const auto& [label, ratio] : ratios_) {
      out << std::left << std::setw(static_cast<int>(width)) << label << "  " << std::right
          << std::setw(14);
      // Two decimals, or three significant digits for a ratio under 0.1 (0.00123, not 0.00).
      if (ratio != 0.0 && std::fabs(ratio) < 0.1) {
        out << std::defaultfloat << std::setprecision(3) << ratio << "\n";
      } else {
        out << std::fixed << std::setprecision(2) << ratio << "\n";
      }
    }
  }
  return out.str();
}

nlohmann::json BenchReport::to_json() const {
  nlohmann::json doc;
  doc["benchmark"] = benchmark_;
  doc["results"] = nlohmann::json::array();
  for (const BenchResult& r : results_) {
    doc["results"].push_back({{"name", r.name}, {"value", r.value}, {"unit", r.unit}});
  }
  doc["ratios"] = nlohmann::json::object();
  for (const auto& [label, ratio] : ratios_) doc["ratios"][label] = ratio;
  return doc;
}

void BenchReport::write_json(const std::string& path) const {
  write_file_atomically(path, to_json().dump(2) + "\n");
}

}  // namespace tagflow::bench
