#include <iostream>

#include <CLI/CLI.hpp>

#include "bench/registry.hpp"
#include "cli/commands.hpp"

namespace tagflow::cli {

void add_bench_command(CLI::App& app) {
  std::string names;
  for (const bench::BenchEntry& entry : bench::benchmarks()) {
    names += "\n  " + entry.name + ": " + entry.description;
  }
  auto* command = app.add_subcommand(
      "bench",
      "Run a benchmark, print its table and ratios (bench/README.md). Benchmarks:" + names);
  auto name = std::make_shared<std::string>();
  auto json_path = std::make_shared<std::string>();
  auto options = std::make_shared<bench::BenchOptions>();
  command->add_option("name", *name, "Benchmark to run")->required();
  command->add_option("--json", *json_path, "Also write the report as JSON to this file");
  command->add_flag("--quick", options->quick,
                    "Very short run that exercises every path (figures not meant to be quoted)");
  command->callback([name, json_path, options] {
    const bench::BenchEntry* entry = bench::find_benchmark(*name);
    if (entry == nullptr) {
      std::cerr << "tagflow bench: unknown benchmark '" << *name << "'; known:";
      for (const bench::BenchEntry& e : bench::benchmarks()) std::cerr << " " << e.name;
      std::cerr << "\n";
      throw CLI::RuntimeError(2);
    }
    const bench::BenchReport report = entry->run(*options);
    std::cout << report.table();
    if (!json_path->empty()) report.write_json(*json_path);
  });
}

}  // namespace tagflow::cli
