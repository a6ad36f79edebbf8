// The options of `tagflow bench NAME` for the LibTorch benchmarks (`learner`, `marl`, `serve`) and
// the refusals that need no LibTorch. `tagflow` parses and checks such a command line itself before
// it hands the command to tagflow-torch (cli/main.cpp), so a refusal costs no LibTorch start;
// tagflow-torch parses the same declarations again for the run (cli/torch_bench_command.cpp).
#pragma once

#include <string>

#include "bench/registry.hpp"

namespace CLI {
class App;
}

namespace tagflow::cli {

struct TorchBenchOptions {
  std::string name;
  std::string json_path;
  bench::BenchOptions options;
};

/// Adds the `bench` subcommand of tagflow-torch to `app`, every option bound to `options` (which
/// must outlive the parse); the caller sets its callback.
CLI::App* add_torch_bench_options(CLI::App& app, TorchBenchOptions& options);

/// What a run of a LibTorch benchmark refuses before it starts, each with exit 2 (fail_command):
/// --only for another benchmark than marl, a --json path that cannot be written. (`tagflow` hands
/// over only the names bench/registry.cpp marks `torch`; tagflow-torch run directly refuses any
/// other name itself.)
void check_torch_bench_options(const TorchBenchOptions& options);

/// `tagflow bench NAME ARGS` for a LibTorch benchmark, parsed and checked as tagflow-torch would
/// (refuse_before_torch(), cli/commands.hpp): the exit status of a refusal, or -1.
[[nodiscard]] int refuse_torch_bench_early(int argc, char** argv);

}  // namespace tagflow::cli
