#include "cli/launch/up_single_options.hpp"

#include <string>

#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "hosts/replica_params_check.hpp"

namespace tagflow::cli {
namespace {

/// The first option of the process placement given, with why a one-process run has no use for
/// it; empty when there is none.
std::string process_placement_option(const UpSingleOptions& options) {
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
  if (options.stop_with_stdin) {
    return "--stop-with-stdin stops the processes a launcher started when its standard input "
           "closes (how a head host stops the others' launchers); a one-process run stops on "
           "Ctrl-C or SIGTERM";
  }
  return "";
}

}  // namespace

CLI::App* add_up_single_options(CLI::App& app, UpSingleOptions& options) {
  auto* command = app.add_subcommand(
      "up",
      "Run a cluster file in this process, every node as one deterministic reactor program, and "
      "print the run's digest: what `tagflow up FILE --placement single` runs (`tagflow up FILE` "
      "starts the processes)");
  // No CLI11 check that the file exists: the cluster file's loader names a missing or unreadable
  // one (FILE:0: (file): ...) with exit status 2, as the process placement does.
  command->add_option("file", options.file, "Cluster file (configs/README.md)")->required();
  command
      ->add_option("--placement", options.placement,
                   "single, the only placement here: all nodes in this process")
      ->capture_default_str();
  command->add_option("--summary", options.summary_path, "Write the run summary JSON here");
  command->add_option("--mode", options.mode, "Override the file's mode")
      ->check(CLI::IsMember({"reactor", "actor"}));
  command
      ->add_option("--workers", options.workers,
                   "Worker threads: the reactor scheduler's (1 when not given), or in actor mode "
                   "the actor system's (one per core when not given)")
      ->check(CLI::Range(1U, 64U));
  command->add_flag("--quiet", options.quiet, "No progress line");
  // Accepted only to be refused with a reason (CLI11 would only say it did not expect them).
  command->add_flag("--trace", options.trace, "Process placement only: not with single");
  command->add_option("--log-dir", options.log_dir, "Process placement only: not with single");
  command->add_option("--host", options.host, "Process placement only: not with single");
  command->add_option("--resume", options.resume_run, "Process placement only: not with single");
  command->add_flag("--stop-with-stdin", options.stop_with_stdin,
                    "Process placement only: not with single");
  return command;
}

cluster::ClusterConfig load_up_single(const UpSingleOptions& options) {
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
  if (const std::string why = output_over_input("--summary", options.summary_path, options.file);
      !why.empty()) {
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
  return config;
}

int refuse_up_single_early(int argc, char** argv) {
  UpSingleOptions options;
  return refuse_before_torch(argc, argv, [&options](CLI::App& app) {
    add_up_single_options(app, options)->callback([&options] { (void)load_up_single(options); });
  });
}

}  // namespace tagflow::cli
