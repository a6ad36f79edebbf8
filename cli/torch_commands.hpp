// The subcommands of the tagflow-torch executable (the LibTorch half of the tagflow CLI; `tagflow
// train ...` and `tagflow bench learner` are handed to it). Same conventions as commands.hpp:
// each add_*_command registers one subcommand; a failing callback prints its error to stderr
// and throws CLI::RuntimeError(exit_code).
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace tagflow::cli {

/// `train --env ID --algo dqn --seed S [--summary FILE] ...`: single-process training.
void add_train_command(CLI::App& app);

/// `bench NAME [--json FILE] [--quick]` for the benchmarks marked `torch` in bench/registry.cpp.
void add_torch_bench_command(CLI::App& app);

/// `up FILE --placement single [--summary PATH] [--workers N]`: a cluster file in one process.
void add_up_single_command(CLI::App& app);

/// `node --config FILE --name PROCESS ...` for processes with learner or inference replicas.
void add_node_command(CLI::App& app);

/// Sets LibTorch's intra-op threads (and OpenBLAS's, when OpenBLAS is the BLAS) to `threads`.
void set_torch_threads(int threads);

/// Records what the libraries chose (BLAS, OpenBLAS core, ATen capability) in this process's
/// numerics report (common/numerics.hpp); warns once when portable mode runs on another BLAS.
void record_torch_numerics();

/// One line naming the BLAS LibTorch uses, with a warning when it is the slow reference BLAS.
[[nodiscard]] std::string blas_startup_line();

}  // namespace tagflow::cli
