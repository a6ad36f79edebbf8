#include "bench/paper/workload_table.hpp"

#include <algorithm>
#include <iomanip>
#include <sstream>

namespace tagflow::bench::paper {

const ReferenceFigure* reference(const std::string& row) {
  for (const ReferenceFigure& f : kReferenceFigures) {
    if (row == f.name) return &f;
  }
  return nullptr;
}

const char* unit_of(Metric metric) {
  switch (metric) {
    case Metric::kObservationsPerSecond:
      return "obs/s";
    case Metric::kMillisecondsPerRound:
      return "ms/round";
    case Metric::kSeconds:
      return "s";
  }
  return "";
}

double figure_of(Metric metric, const RoundRun& run, int rounds) {
  switch (metric) {
    case Metric::kObservationsPerSecond:
      return static_cast<double>(run.answers) / run.seconds;
    case Metric::kMillisecondsPerRound:
      return run.seconds * 1e3 / rounds;
    case Metric::kSeconds:
      return run.seconds;
  }
  return 0.0;
}

void WorkloadTable::set(const std::string& row, const std::string& placement, double value) {
  if (std::find(rows_.begin(), rows_.end(), row) == rows_.end()) rows_.push_back(row);
  if (std::find(columns_.begin(), columns_.end(), placement) == columns_.end()) {
    columns_.push_back(placement);
  }
  cells_[{row, placement}] = value;
}

std::string WorkloadTable::render() const {
  std::ostringstream out;
  out << "\n== " << title_ << " (" << unit_of(metric_) << ", "
      << (metric_ == Metric::kObservationsPerSecond ? "higher" : "lower") << " is better)\n";
  out << std::left << std::setw(18) << "case";
  for (const std::string& c : columns_) out << std::right << std::setw(c.size() + 2) << c;
  out << std::setw(12) << "paper_LF" << std::setw(12) << "paper_Ray"
      << "\n";
  for (const std::string& row : rows_) {
    out << std::left << std::setw(18) << row;
    for (const std::string& c : columns_) {
      const auto cell = cells_.find({row, c});
      out << std::right << std::setw(c.size() + 2);
      if (cell == cells_.end()) {
        out << "-";
      } else {
        out << std::setprecision(4) << cell->second;
      }
    }
    const ReferenceFigure* ref = reference(row);
    if (ref != nullptr) {
      out << std::setw(12) << ref->lingua_franca << std::setw(12) << ref->ray << "\n";
    } else {
      out << std::setw(12) << "-" << std::setw(12) << "-"
          << "\n";
    }
  }
  return out.str();
}

}  // namespace tagflow::bench::paper
