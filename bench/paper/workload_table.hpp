// WorkloadTable: one workload's figures as `tagflow bench paper` prints them — a row per case, a
// column per placement, the paper's Lingua Franca and Ray figures beside (reference_figures.hpp).
// Metric says how a row's figure comes from a run and which way is better. Not thread-safe.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "bench/paper/placements.hpp"
#include "bench/paper/reference_figures.hpp"

namespace tagflow::bench::paper {

/// The paper's figures for `row` (e.g. "gym_cartpole"), or nullptr.
const ReferenceFigure* reference(const std::string& row);

enum class Metric { kObservationsPerSecond, kMillisecondsPerRound, kSeconds };

const char* unit_of(Metric metric);
/// The figure of `run` over `rounds` rounds: answers/s, ms per round or seconds.
double figure_of(Metric metric, const RoundRun& run, int rounds);

class WorkloadTable {
 public:
  WorkloadTable(std::string title, Metric metric) : title_(std::move(title)), metric_(metric) {}
  /// Sets the cell (row, placement); rows and columns keep the order they were first set in.
  void set(const std::string& row, const std::string& placement, double value);
  /// The table as text, with the paper's figures in the last two columns.
  [[nodiscard]] std::string render() const;

 private:
  std::string title_;
  Metric metric_;
  std::vector<std::string> rows_;
  std::vector<std::string> columns_;
  std::map<std::pair<std::string, std::string>, double> cells_;
};

}  // namespace tagflow::bench::paper
