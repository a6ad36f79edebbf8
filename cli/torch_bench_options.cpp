#include "cli/torch_bench_options.hpp"

#include <CLI/CLI.hpp>

#include "bench/marl_workloads.hpp"
#include "cli/commands.hpp"

namespace tagflow::cli {

CLI::App* add_torch_bench_options(CLI::App& app, TorchBenchOptions& options) {
  auto* command = app.add_subcommand("bench", "Run a LibTorch benchmark (see tagflow bench)");
  command->add_option("name", options.name, "Benchmark to run")->required();
  command->add_option("--json", options.json_path, "Also write the report as JSON to this file");
  command->add_flag("--quick", options.options.quick,
                    "Very short run that exercises every path (figures not meant to be quoted)");
  command
      ->add_option("--only", options.options.only,
                   "marl: " + bench::marl_workload_list() + " (default: tj10)")
      ->check(kNotEmpty);
  // Accepted only to be refused as `tagflow bench` refuses it for the other benchmarks.
  command->add_flag("--print", options.options.print, "paper only: not with this benchmark");
  return command;
}

void check_torch_bench_options(const TorchBenchOptions& options) {
  if (options.options.print) {
    fail_command("bench", "--print is for `tagflow bench paper`, not " + options.name,
                 kExitBadFile);
  }
  if (options.name != "marl" && !options.options.only.empty()) {
    fail_command(
        "bench",
        "--only is for `tagflow bench paper` and `tagflow bench marl`, not " + options.name,
        kExitBadFile);
  }
  const std::string& only = options.options.only;
  if (options.name == "marl" && !only.empty() && !bench::is_marl_workload(only)) {
    fail_command("bench marl", bench::marl_workload_refusal(only),
                 kExitBadFile);  // refused here, before LibTorch starts
  }
  if (const std::string why = unwritable_output("--json", options.json_path); !why.empty()) {
    fail_command("bench", why, kExitBadFile);  // before the run, not after its table
  }
}

int refuse_torch_bench_early(int argc, char** argv) {
  TorchBenchOptions options;
  return refuse_before_torch(argc, argv, [&options](CLI::App& app) {
    add_torch_bench_options(app, options)->callback([&options] {
      check_torch_bench_options(options);
    });
  });
}

}  // namespace tagflow::cli
