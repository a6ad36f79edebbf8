// `tagflow bench NAME` for the LibTorch benchmarks (the `torch` entries of bench/registry.cpp),
// run inside tagflow-torch. Same options and output as the tagflow side (cli/bench_command.cpp).
#include <functional>
#include <iostream>
#include <map>
#include <memory>

#include <CLI/CLI.hpp>

#include "bench/benchmarks.hpp"
#include "cli/commands.hpp"
#include "cli/torch_bench_options.hpp"
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
  auto options = std::make_shared<TorchBenchOptions>();
  CLI::App* command = add_torch_bench_options(app, *options);
  command->callback([options] {
    const auto entry = torch_benchmarks().find(options->name);
    if (entry == torch_benchmarks().end()) {
      std::string known;
      for (const auto& [benchmark, run] : torch_benchmarks()) known += " " + benchmark;
      fail_command("bench",
                   "'" + options->name + "' is not a LibTorch benchmark; known:" + known +
                       "; the others run in `tagflow bench` (`tagflow bench --help` lists them)",
                   kExitBadFile);
    }
    // Run through `tagflow`, these were checked before LibTorch started; run directly, here.
    check_torch_bench_options(*options);
    set_torch_threads(1);
    // On stderr: stdout holds the tables alone.
    std::cerr << blas_startup_line() << "\n";
    bench::BenchReport report("");
    try {
      report = entry->second(options->options);
    } catch (const std::invalid_argument& e) {  // an --only that names no workload
      fail_command("bench " + options->name, e.what(), kExitBadFile);
    }
    std::cout << report.table();
    if (!options->json_path.empty()) report.write_json(options->json_path);
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
