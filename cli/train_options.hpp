// The options of `tagflow train` and the refusals that need no LibTorch. `tagflow` parses and
// checks a `train` command line itself before it hands the command to tagflow-torch
// (cli/main.cpp), so a bad option is refused at once rather than after LibTorch's start (about
// 1.5 s); tagflow-torch parses the same declarations again for the run (cli/train_command.cpp).
#pragma once

#include <string>

#include "rl/learning/dqn_trainer.hpp"

namespace CLI {
class App;
}

namespace tagflow::cli {

struct TrainOptions {
  learning::TrainConfig config;
  std::string algo = "dqn";
  std::string summary_path;
  std::string policy_path;
  std::string weights_path;
  int threads = 1;
  std::string numerics = "portable";
  bool quiet = false;
};

/// Adds the `train` subcommand to `app` with every option bound to `options` (which must outlive
/// the parse); the caller sets its callback.
CLI::App* add_train_options(CLI::App& app, TrainOptions& options);

/// What a run refuses before it starts, each with exit 2 (fail_command): an --algo other than
/// dqn, an output (--summary, --save-policy, --save-weights) that cannot be written, an unknown
/// --env.
void check_train_options(const TrainOptions& options);

/// `tagflow train ARGS` (argv[1] is "train") parsed and checked as tagflow-torch would
/// (refuse_before_torch(), cli/commands.hpp): the exit status of a refusal, or -1.
[[nodiscard]] int refuse_train_early(int argc, char** argv);

}  // namespace tagflow::cli
