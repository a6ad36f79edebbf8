// `tagflow bench NAME` for the LibTorch benchmarks (the `torch` entries of bench/registry.cpp),
// run inside tagflow-torch. Same options and output as the tagflow side (cli/bench_command.cpp).
#include <functional>
#include <iostream>
#include <map>
#include <memory>

#include <CLI/CLI.hpp>

#include "bench/benchmarks.hpp"
#include "cli/commands.hpp"
#include "cli/torch_commands.hpp"

namespace tagflow::cli {
namespace {

const std::map<std::string, std::function<bench::BenchReport(const bench::BenchOptions&)>>&
torch_benchmarks() {
  static const std::map<std::string, std::function<bench::BenchReport(const bench::BenchOptions&)>>
      entries = {{"learner", bench::run_learner_bench},
                 {"marl", bench::run_marl_bench},
                 {"serve", bench::run_serve_bench}};
  return entries;
}

}  // namespace

void add_torch_bench_command(CLI::App& app) {
  auto* command = app.add_subcommand("bench", "Run a LibTorch benchmark (see tagflow bench)");
  auto name = std::make_shared<std::string>();
  auto json_path = std::make_shared<std::string>();
  auto options = std::make_shared<bench::BenchOptions>();
  command->add_option("name", *name, "Benchmark to run")->required();
  command->add_option("--json", *json_path, "Also write the report as JSON to this file");
  command->add_flag("--quick", options->quick,
                    "Very short run that exercises every path (figures not meant to be quoted)");
  command->add_option("--only", options->only,
                      "marl: tj4, tj10 (default), tj4-in-process or tj10-in-process");
  command->callback([name, json_path, options] {
    const auto entry = torch_benchmarks().find(*name);
    if (entry == torch_benchmarks().end()) {
      std::string known;
      for (const auto& [benchmark, run] : torch_benchmarks()) known += " " + benchmark;
      fail_command("bench",
                   "'" + *name + "' is not a LibTorch benchmark; known:" + known +
                       "; the others run in `tagflow bench` (`tagflow bench --help` lists them)",
                   kExitBadFile);
    }
    if (*name != "marl" && !options->only.empty()) {
      fail_command("bench",
                   "--only is for `tagflow bench paper` and `tagflow bench marl`, not " + *name,
                   kExitBadFile);
    }
    if (const std::string why = unwritable_output("--json", *json_path); !why.empty()) {
      fail_command("bench", why, kExitBadFile);  // before the run, not after its table
    }
    set_torch_threads(1);
    // On stderr: stdout holds the tables alone.
    std::cerr << blas_startup_line() << "\n";
    bench::BenchReport report("");
    try {
      report = entry->second(*options);
    } catch (const std::invalid_argument& e) {  // an --only that names no workload
      fail_command("bench " + *name, e.what(), kExitBadFile);
    }
    std::cout << report.table();
    if (!json_path->empty()) report.write_json(*json_path);
  });
  // The inference servers of `tagflow bench marl`'s raw ceiling (bench/marl_bench.cpp); not for
  // users.
  auto* worker = app.add_subcommand("bench-marl-worker", "");
  worker->group("");
  worker->allow_extras();
  worker->prefix_command();
  worker->callback([worker] {
    const int code = bench::run_marl_raw_server(worker->remaining());
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace tagflow::cli
