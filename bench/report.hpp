// BenchReport: the one result format every `tagflow bench NAME` produces (see bench/README.md).
//
// A report holds named figures (value + unit) and ratios between figures measured in the same
// run. It prints as a table and writes the JSON document
//   {"benchmark": NAME, "results": [{"name", "value", "unit"}...], "ratios": {"A/B": x, ...}}.
// Not thread-safe: a benchmark fills its report from one thread.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace tagflow::bench {

struct BenchResult {
  std::string name;
  double value = 0.0;
  std::string unit;
};

class BenchReport {
 public:
  explicit BenchReport(std::string benchmark);

  const std::string& benchmark() const { return benchmark_; }
  const std::vector<BenchResult>& results() const { return results_; }
  const std::map<std::string, double>& ratios() const { return ratios_; }

  /// Records a figure. Names are unique within a report; a second add of a name throws.
  void add(const std::string& name, double value, const std::string& unit);

  /// Records ratio `label` = value(numerator) / value(denominator), both figures already added
  /// to this report, so every ratio compares numbers measured in the same run. Throws
  /// std::out_of_range when either name is unknown.
  double add_ratio(const std::string& label, const std::string& numerator,
                   const std::string& denominator);

  /// The value of a recorded figure; throws std::out_of_range when `name` is unknown.
  [[nodiscard]] double value(const std::string& name) const;

  [[nodiscard]] std::string table() const;
  [[nodiscard]] nlohmann::json to_json() const;
  /// Writes to_json() to `path` atomically (temporary file, then rename). Throws on I/O error.
  void write_json(const std::string& path) const;

 private:
  std::string benchmark_;
  std::vector<BenchResult> results_;
  std::map<std::string, double> ratios_;
};

}  // namespace tagflow::bench
