// `tagflow up FILE --placement single [--summary PATH] [--workers N]`: the whole cluster file in
// this process as one reactor program (hosts/reactor/single_process_cluster.hpp), in tagflow-torch.
// `tagflow up` (cli/up_command.cpp) hands the command over when --placement single is given;
// every other placement is the multi-process launcher of the plain tagflow binary.
#include <signal.h>
#include <unistd.h>

#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/torch_commands.hpp"
#include "common/atomic_file.hpp"
#include "hosts/actor/actor_cluster.hpp"
#include "hosts/reactor/single_process_cluster.hpp"
#include "hosts/replica_params_check.hpp"
#include "nodes/cluster/cluster_config.hpp"
#include "nodes/node_params.hpp"
#include "rl/learning/learner_checkpoint.hpp"

namespace tagflow::cli {
namespace {

struct UpOptions {
  std::string file;
  std::string placement = "single";
  std::string summary_path;
  std::string mode;  // --mode reactor|actor: overrides the file's mode
  unsigned workers = 1;
  bool quiet = false;
  // Options of the process placement (cli/up_command.cpp), refused here with the reason.
  bool trace = false;
  std::string log_dir;
  std::string host;
  std::string resume_run;
};

/// The first option of the process placement given, with why a one-process run has no use for
/// it; empty when there is none.
std::string process_placement_option(const UpOptions& options) {
  if (options.trace) {
    return "--trace records the processes of the process placement; a one-process run is not "
           "traced (`tagflow up FILE --trace`, without --placement single, traces the run)";
  }
  if (!options.log_dir.empty()) {
    return "--log-dir holds the logs and results of the processes the launcher starts; a "
           "one-process run starts none and writes only --summary";
  }
  if (!options.host.empty()) {
    return "--host starts one host's processes of a multi-host file; --placement single runs "
           "every node of the file in this process";
  }
  if (!options.resume_run.empty()) {
    return "--resume continues a process-placement run from the checkpoints in its log "
           "directory; a one-process run writes none";
  }
  return "";
}

/// Ctrl-C or SIGTERM ends a one-process run at once with status 130, as the process placement's
/// launcher ends (docs/clusters.md, "Exit codes"); nothing is combined, so there is no summary.
void interrupt_run(int /*signal*/) {
  static const char message[] = "\ntagflow up: interrupted\n";
  (void)!::write(STDERR_FILENO, message, sizeof message - 1);
  ::_exit(kExitInterrupted);
}

void run_up(const UpOptions& options) {
  if (options.placement != "single") {
    fail_command("up",
                 "placement '" + options.placement +
                     "' is not available here (only --placement single runs in one process); "
                     "`tagflow up FILE` starts the processes",
                 kExitBadFile);
  }
  if (const std::string refused = process_placement_option(options); !refused.empty()) {
    fail_command("up", refused, kExitBadFile);
  }
  // The summary is written at the end: a path it cannot be written to is refused now.
  if (const std::string why = unwritable_output("--summary", options.summary_path); !why.empty()) {
    fail_command("up", why, kExitBadFile);
  }
  cluster::ClusterConfig config;
  try {
    config = cluster::load_cluster_config(options.file);
    // Every node's params, before anything runs: the errors of the process placement, naming
    // the file, the param's line and its key.
    hosts::check_replica_params(config);
  } catch (const cluster::ConfigError& e) {
    fail_command("up", e.what(), kExitBadFile);
  }
  if (!options.mode.empty()) {
    config.mode = options.mode == "actor" ? cluster::Mode::actor : cluster::Mode::reactor;
  }
  set_torch_threads(1);  // the learner's sums in one order: the digest is the same every run
  struct sigaction interrupt {};
  interrupt.sa_handler = interrupt_run;
  ::sigemptyset(&interrupt.sa_mask);
  ::sigaction(SIGINT, &interrupt, nullptr);
  ::sigaction(SIGTERM, &interrupt, nullptr);
  hosts::SingleProcessOptions run_options;
  run_options.workers = options.workers;
  run_options.progress = !options.quiet;
  hosts::RunSummary summary;
  try {
    std::cerr << "tagflow up: " << config.name << " (" << options.file << "), placement single, "
              << run_options.workers << " worker(s)\n";
    if (config.trace.enabled) {
      std::cerr << "tagflow up: trace: records the processes of the process placement (tagflow up "
                   "FILE); this one-process run is not traced\n";
    }
    if (config.mode == cluster::Mode::actor) {  // every replica a CAF actor (actors/README.md)
      hosts::ActorClusterOptions actor_options;
      actor_options.progress = !options.quiet;
      summary = hosts::run_actor_cluster(config, actor_options);
    } else {
      summary = hosts::run_single_process_cluster(config, run_options);
    }
  } catch (const cluster::ConfigError& e) {
    fail_command("up", e.what(), kExitBadFile);
  } catch (const nodes::ParamError& e) {
    fail_command("up", options.file + ": " + e.what(), kExitBadFile);
  } catch (const std::invalid_argument& e) {
    fail_command("up", e.what(), kExitBadFile);
  }
  std::cout << "stop " << summary.stop_reason << ": mean_return " << summary.mean_return
            << ", env_steps " << summary.env_steps << ", updates " << summary.updates << ", "
            << summary.seconds << " s, digest " << summary.digest_hex()
            << (summary.digest_reproducible ? ""
                                            : " (" + summary.unreproducible + ": not reproducible)")
            << "\n";
  for (const std::string& line : summary.detail_lines()) std::cout << line << "\n";
  if (!options.summary_path.empty()) {
    try {
      write_file_atomically(options.summary_path, summary.to_json() + "\n");
    } catch (const std::exception& e) {
      fail_command("up", e.what(), kExitFailed);
    }
  }
  if (config.stop.target_return && !summary.target_reached) {
    std::cerr << "tagflow up: stopped (" << summary.stop_reason << ") before reaching the target "
              << "return " << *config.stop.target_return << "\n";
    throw CLI::RuntimeError(kExitBeforeTarget);
  }
}

}  // namespace

void add_up_single_command(CLI::App& app) {
  auto options = std::make_shared<UpOptions>();
  auto* command = app.add_subcommand(
      "up",
      "Run a cluster file in this process, every node as one deterministic reactor program, and "
      "print the run's digest: what `tagflow up FILE --placement single` runs (`tagflow up FILE` "
      "starts the processes)");
  // No CLI11 check that the file exists: the cluster file's loader names a missing or unreadable
  // one (FILE:0: (file): ...) with exit status 2, as the process placement does.
  command->add_option("file", options->file, "Cluster file (configs/README.md)")->required();
  command
      ->add_option("--placement", options->placement,
                   "single, the only placement here: all nodes in this process")
      ->capture_default_str();
  command->add_option("--summary", options->summary_path, "Write the run summary JSON here");
  command->add_option("--mode", options->mode, "Override the file's mode")
      ->check(CLI::IsMember({"reactor", "actor"}));
  command->add_option("--workers", options->workers, "Reactor worker threads")
      ->capture_default_str()
      ->check(CLI::Range(1U, 64U));
  command->add_flag("--quiet", options->quiet, "No progress line");
  // Accepted only to be refused with a reason (CLI11 would only say it did not expect them).
  command->add_flag("--trace", options->trace, "Process placement only: not with single");
  command->add_option("--log-dir", options->log_dir, "Process placement only: not with single");
  command->add_option("--host", options->host, "Process placement only: not with single");
  command->add_option("--resume", options->resume_run, "Process placement only: not with single");
  command->callback([options] { run_up(*options); });
}

}  // namespace tagflow::cli
