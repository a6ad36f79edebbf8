// The benchmarks `tagflow bench NAME` knows. Each entry runs in the same process as the CLI,
// except those marked `torch`, which the CLI hands to the tagflow-torch executable so that only
// LibTorch benchmarks pay LibTorch's start-up cost.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "bench/report.hpp"

namespace tagflow::bench {

struct BenchOptions {
  /// A much shorter run that still exercises every code path (used by smoke tests; its figures
  /// are not meant to be quoted).
  bool quick = false;
  /// `tagflow bench paper --only NAME`: run one workload; empty: all.
  std::string only;
  /// `tagflow bench paper --print`: also measure with every observation printed to stdout.
  bool print = false;
};

struct BenchEntry {
  std::string name;
  std::string description;
  std::function<BenchReport(const BenchOptions&)> run;  // empty when `torch`
  bool torch = false;
};

/// Every benchmark, in the order `tagflow bench --help` lists them.
const std::vector<BenchEntry>& benchmarks();

/// The entry called `name`, or nullptr.
const BenchEntry* find_benchmark(const std::string& name);

/// Runs `entry` (not a `torch` one) with info logging off, so that stdout holds its tables alone
/// (a coordinator's joins and resignations would land in their middle); warnings still show.
BenchReport run_benchmark(const BenchEntry& entry, const BenchOptions& options);

}  // namespace tagflow::bench
