// `tagflow-torch`: the LibTorch half of the tagflow CLI. `tagflow` hands it the commands that need
// LibTorch, so that only those pay LibTorch's start-up cost (cmake/README.md).
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/process_numerics.hpp"
#include "cli/torch_commands.hpp"
#include "cli/torch_probe.hpp"
#include "nodes/kind/torch_registry.hpp"
#include "tagflow/build_info.hpp"

int main(int argc, char** argv) {
  // A closed pipe on standard output is a failed write, said and exit 1
  // (tagflow::cli::standard_output_status), not a silent death by SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  // The numeric kernels (common/numerics.hpp): started through tagflow or a launcher, the
  // environment is already set; started directly, this re-executes once with it.
  try {
    tagflow::cli::pin_process_numerics(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "tagflow-torch: " << e.what() << "\n";
    return 1;
  }
  // Run through `tagflow` (exec_torch_command), its usage lines say `tagflow`, as typed; the
  // processes it starts do not inherit that.
  const char* invoked_as = std::getenv("TAGFLOW_INVOKED_AS");
  const bool through_tagflow = invoked_as != nullptr && std::string(invoked_as) == "tagflow";
  ::unsetenv("TAGFLOW_INVOKED_AS");
  CLI::App app{"tagflow-torch: the LibTorch commands of tagflow (normally run through tagflow)",
               through_tagflow ? "tagflow" : "tagflow-torch"};
  app.set_version_flag("--version", std::string("tagflow-torch ") + tagflow::build_info::kVersion);
  app.require_subcommand(1);
  // One LibTorch thread unless a command asks for more (tagflow train --threads): a learner's sums
  // then run in one order in every process and placement, so the digest does not depend on
  // whether it shares a process (a node process's learners, --placement single) or not.
  tagflow::cli::set_torch_threads(1);
  tagflow::cli::record_torch_numerics();
  // The learner and inference kinds can be built here (nodes/kind/torch_registry.hpp).
  tagflow::nodes::install_torch_kinds();
  int exit_code = 0;
  app.add_subcommand("probe", "Print LibTorch's version and BLAS backend as JSON (for doctor)")
      ->callback([&exit_code] { exit_code = tagflow::cli::run_torch_probe(); });
  tagflow::cli::add_train_command(app);
  tagflow::cli::add_torch_bench_command(app);
  tagflow::cli::add_up_single_command(app);
  tagflow::cli::add_node_command(app);
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
    std::cerr << "tagflow-torch: " << e.what() << "\n";
    return 1;
  }
  return tagflow::cli::standard_output_status(through_tagflow ? "tagflow" : "tagflow-torch",
                                              exit_code);
}
