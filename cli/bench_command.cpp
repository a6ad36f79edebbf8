#include <iostream>

#include <CLI/CLI.hpp>

#include "bench/marl_workloads.hpp"
#include "bench/paper/placements.hpp"
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
  command
      ->add_option("--only", options->only,
                   "paper: run one workload (gym, atari, qlearning, marl, broadcast, object); "
                   "marl: " +
                       bench::marl_workload_list() + " (default: tj10)")
      ->check(kNotEmpty);
  command->add_flag(
      "--print", options->print,
      "paper: also measure the gym workload with every observation printed to stdout, "
      "as the paper's harness did");
  command->callback([name, json_path, options] {
    const bench::BenchEntry* entry = bench::find_benchmark(*name);
    if (entry == nullptr) {
      std::string known;
      for (const bench::BenchEntry& e : bench::benchmarks()) known += " " + e.name;
      fail_command("bench", "unknown benchmark '" + *name + "'; known:" + known, kExitBadFile);
    }
    // `tagflow bench marl/learner/serve` went to tagflow-torch (checked first by
    // cli/torch_bench_options.hpp): here only paper takes --only and --print.
    if (*name != "paper" && (!options->only.empty() || options->print)) {
      fail_command("bench",
                   std::string(options->print ? "--print" : "--only") + " is for `tagflow bench " +
                       (options->print ? "paper`" : "paper` and `tagflow bench marl`") + ", not " +
                       *name,
                   kExitBadFile);
    }
    // A --json path that cannot be written is refused before the run, not after its table.
    if (const std::string why = unwritable_output("--json", *json_path); !why.empty()) {
      fail_command("bench", why, kExitBadFile);
    }
    bench::BenchReport report("");
    try {
      report = bench::run_benchmark(*entry, *options);
    } catch (const std::invalid_argument& e) {  // an --only that names no workload
      fail_command("bench " + *name, e.what(), kExitBadFile);
    }
    std::cout << report.table();
    if (!json_path->empty()) report.write_json(*json_path);
  });
  // The worker processes `tagflow bench paper` starts (bench/paper/placements.hpp); not for users.
  auto* worker = app.add_subcommand("bench-paper-worker", "");
  worker->group("");
  worker->allow_extras();
  worker->prefix_command();
  worker->callback([worker] {
    const int code = bench::paper::run_paper_worker_process(worker->remaining());
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace tagflow::cli
