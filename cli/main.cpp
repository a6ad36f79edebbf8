// `tagflow`: the command users run. LibTorch commands live in the tagflow-torch executable
// (cli/torch_main.cpp) so that commands which need no LibTorch start in milliseconds.
#include <csignal>
#include <cstdlib>
#include <iostream>

#include <CLI/CLI.hpp>

#include "bench/registry.hpp"
#include "cli/commands.hpp"
#include "cli/launch/up_single_options.hpp"
#include "cli/process_defaults.hpp"
#include "cli/process_numerics.hpp"
#include "cli/torch_bench_options.hpp"
#include "cli/train_options.hpp"
#include "tagflow/build_info.hpp"

namespace {

/// True when argv names a command that lives in tagflow-torch.
bool is_torch_command(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "train") return true;  // `tagflow train ...`
  if (argc >= 2 && std::string(argv[1]) == "up") {  // `tagflow up FILE --placement single`
    for (int i = 2; i < argc; ++i) {
      const std::string arg = argv[i];
      if (arg == "--placement=single") return true;
      if (arg == "--placement" && i + 1 < argc && std::string(argv[i + 1]) == "single") return true;
    }
  }
  if (argc >= 2 && std::string(argv[1]) == "node")
    return tagflow::cli::node_needs_torch(argc, argv);
  if (argc < 3) return false;
  const std::string command = argv[1];
  if (command == "bench") {
    const tagflow::bench::BenchEntry* entry = tagflow::bench::find_benchmark(argv[2]);
    return entry != nullptr && entry->torch;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  // A closed pipe on standard output is a failed write, said and exit 1
  // (tagflow::cli::standard_output_status), not a silent death by SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  // Before anything else: the numeric kernels the file asks for (common/numerics.hpp). The
  // environment set here reaches tagflow-torch and every process a launcher starts.
  try {
    tagflow::cli::pin_process_numerics(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "tagflow: " << e.what() << "\n";
    return 1;
  }
  // OpenBLAS on one thread and malloc on huge pages, for the processes started from here
  // (cli/process_defaults.hpp), unless the environment says otherwise.
  tagflow::cli::set_started_process_defaults();
  if (is_torch_command(argc, argv)) {
    // The options of `train`, `up --placement single` (and its cluster file) and the LibTorch
    // benchmarks are checked here first, so a refusal costs no LibTorch start.
    const std::string command = argv[1];
    const int refused = command == "train"   ? tagflow::cli::refuse_train_early(argc, argv)
                        : command == "up"    ? tagflow::cli::refuse_up_single_early(argc, argv)
                        : command == "bench" ? tagflow::cli::refuse_torch_bench_early(argc, argv)
                                             : -1;
    if (refused >= 0) return refused;
    return tagflow::cli::exec_torch_command(argc, argv);
  }

  CLI::App app{"tagflow: distributed reinforcement learning on deterministic reactors", "tagflow"};
  app.set_version_flag("--version", std::string("tagflow ") + tagflow::build_info::kVersion + " (" +
                                        tagflow::build_info::kBuildType + ", " +
                                        tagflow::build_info::kCompiler + ")");
  app.require_subcommand(1);
  // Listed for --help only: main() checks `tagflow train ...` and hands it to tagflow-torch.
  app.add_subcommand("train",
                     "Train a policy in one process with LibTorch (DQN on CartPole-v1, ...)");
  tagflow::cli::add_doctor_command(app);
  tagflow::cli::add_bench_command(app);
  tagflow::cli::add_coordinator_command(app);
  tagflow::cli::add_keys_command(app);
  tagflow::cli::add_monitoring_command(app);
  tagflow::cli::add_env_command(app);
  tagflow::cli::add_node_command(app);
  tagflow::cli::add_up_command(app);
  tagflow::cli::add_slurm_command(app);
  tagflow::cli::add_k8s_command(app);
  tagflow::cli::add_trace_command(app);
  tagflow::cli::add_diff_command(app);
  tagflow::cli::refuse_empty_values(app);
  if (const std::string unknown = tagflow::cli::unknown_command(app, argc, argv);
      !unknown.empty()) {
    std::cerr << unknown << "\n";
    return tagflow::cli::kExitBadFile;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return tagflow::cli::parse_error_status(app, e);
  } catch (const std::exception& e) {
    std::cerr << "tagflow: " << e.what() << "\n";
    return 1;
  }
  return tagflow::cli::standard_output_status("tagflow", 0);
}
