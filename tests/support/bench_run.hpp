// Test helper: `tagflow bench NAME --quick [ARGS] --json FILE` as a user runs it, and its report
// read back (bench/README.md gives the JSON's shape: benchmark, results, ratios).
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/run_command.hpp"

namespace tagflow::testing {

struct BenchRun {
  CommandResult command;                 // exit code and what it printed (stderr included)
  std::string json_path;                 // where the report was written (left for the caller)
  nlohmann::json doc;                    // the report; null when the command failed or wrote none
  std::map<std::string, double> values;  // each result's value by name
};

/// Runs the benchmark `name` with --quick and `args` (e.g. "--only tj4-in-process"), writing its
/// report to a file of its own under the test's temporary directory.
inline BenchRun run_quick_bench(const std::string& name, const std::string& args = "") {
  BenchRun run;
  run.json_path = ::testing::TempDir() + name + "_bench_" + std::to_string(::getpid()) + ".json";
  std::filesystem::remove(run.json_path);
  run.command = run_command(tagflow_binary() + " bench " + name + " --quick " + args + " --json " +
                            run.json_path + " 2>&1");
  if (run.command.exit_code != 0 || !std::filesystem::exists(run.json_path)) return run;
  std::ifstream in(run.json_path);
  run.doc = nlohmann::json::parse(in);
  for (const auto& r : run.doc["results"]) {
    run.values[r["name"].get<std::string>()] = r["value"].get<double>();
  }
  return run;
}

}  // namespace tagflow::testing
