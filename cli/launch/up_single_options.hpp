// The options of `tagflow up FILE --placement single` and the refusals that need no LibTorch.
// `tagflow` parses and checks such a command line itself, the cluster file loaded and every
// node's params checked, before it hands the command to tagflow-torch (cli/main.cpp): a bad option
// or file is refused at once rather than after LibTorch's start (about 1.5 s). tagflow-torch
// parses the same declarations again for the run (cli/launch/up_single_command.cpp).
#pragma once

#include <string>

#include "nodes/cluster/cluster_config.hpp"

namespace CLI {
class App;
}

namespace tagflow::cli {

struct UpSingleOptions {
  std::string file;
  std::string placement = "single";
  std::string summary_path;
  std::string mode;  // --mode reactor|actor: overrides the file's mode
  /// --workers: the reactor scheduler's threads (1 when not given) or, in actor mode, the actor
  /// system's (one per core when not given); 0: not given.
  unsigned workers = 0;
  bool quiet = false;
  // Options of the process placement (cli/up_command.cpp), refused here with the reason.
  bool trace = false;
  std::string log_dir;
  std::string host;
  std::string resume_run;
  bool stop_with_stdin = false;
};

/// Adds the `up` subcommand of the one-process placement to `app`, every option bound to
/// `options` (which must outlive the parse); the caller sets its callback.
CLI::App* add_up_single_options(CLI::App& app, UpSingleOptions& options);

/// What a one-process run refuses before it starts, each with exit 2 (fail_command): another
/// placement, an option of the process placement (saying why), a --summary that cannot be
/// written, and the cluster file's errors (its line and key) and every node's params. Returns the
/// file's cluster, its mode replaced by --mode's.
cluster::ClusterConfig load_up_single(const UpSingleOptions& options);

/// `tagflow up FILE --placement single ...` (argv[1] is "up") parsed and checked as tagflow-torch
/// would (refuse_before_torch(), cli/commands.hpp): the exit status of a refusal, or -1.
[[nodiscard]] int refuse_up_single_early(int argc, char** argv);

}  // namespace tagflow::cli
