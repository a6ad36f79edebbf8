// `tagflow up FILE [--mode reactor|actor] [--host NAME] [--summary PATH] [--log-dir DIR]
// [--quiet] [--trace] [--stop-with-stdin]`: runs a cluster file as the processes it describes
// (cli/launch/cluster_launcher.hpp). `--workers N` is listed for --help and refused here.
// `--placement single` never reaches this command: main() hands it to tagflow-torch, which runs
// the whole file in one process (cli/launch/up_single_command.cpp).
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/launch/cluster_launcher.hpp"

namespace tagflow::cli {
namespace {

struct UpArguments {
  LaunchOptions launch;
  std::string placement = "process";
  std::string mode;
  unsigned workers = 0;  // --workers, an option of --placement single only (0: not given)
};

void run_up(UpArguments& arguments) {
  if (arguments.placement != "process") {
    fail_command("up",
                 "unknown placement '" + arguments.placement +
                     "' (process: the processes the file describes; single: one process)",
                 kExitBadFile);
  }
  if (arguments.workers != 0) {
    fail_command("up",
                 "--workers sets the reactor threads of a one-process run (--placement single); "
                 "in the process placement each process runs its own replicas",
                 kExitBadFile);
  }
  if (!arguments.mode.empty()) {
    arguments.launch.mode =
        arguments.mode == "actor" ? cluster::Mode::actor : cluster::Mode::reactor;
  }
  arguments.launch.tagflow = own_executable();
  const int code = launch_cluster(arguments.launch);
  if (code != 0) throw CLI::RuntimeError(code);
}

}  // namespace

void add_up_command(CLI::App& app) {
  auto arguments = std::make_shared<UpArguments>();
  auto* command = app.add_subcommand(
      "up",
      "Run a cluster file: the coordinator and this host's node processes, a live progress "
      "line, and the run summary with its digest at the end (--placement single: every node in "
      "one process)");
  command->add_option("file", arguments->launch.file, "Cluster file (configs/README.md)")
      ->required();
  command
      ->add_option("--placement", arguments->placement,
                   "process: one process per node replica or `process:` group; single: the "
                   "whole cluster in one process (runs in tagflow-torch)")
      ->capture_default_str();
  command->add_option("--mode", arguments->mode, "Override the file's mode")
      ->check(CLI::IsMember({"reactor", "actor"}));
  command
      ->add_option("--host", arguments->launch.host,
                   "Start only the processes of this host of the file (multi-host clusters)")
      ->check(kNotEmpty);
  command->add_option("--summary", arguments->launch.summary_path,
                      "Also write the run summary JSON here");
  command->add_option("--log-dir", arguments->launch.log_dir,
                      "Logs, result files and pids of the processes: a new or empty directory "
                      "(default runs/CLUSTER-TIMESTAMP); not with --placement single, which "
                      "starts no process");
  command->add_option("--resume", arguments->launch.resume_run,
                      "Continue the run in this log directory from its newest usable checkpoint "
                      "(its launcher died; reactor mode, a file with checkpoint:)");
  command
      ->add_option("--workers", arguments->workers,
                   "--placement single only: reactor worker threads, 1 to 64 (default 1)")
      ->check(CLI::Range(1U, 64U));
  command->add_flag("--quiet", arguments->launch.quiet, "No progress line");
  command->add_flag("--trace", arguments->launch.trace,
                    "Record the run as the file's `trace: true` would: "
                    "LOG_DIR/trace.json at the end (tracing/README.md)");
  command->add_flag("--stop-with-stdin", arguments->launch.stop_with_stdin,
                    "Stop every process when stdin closes (how a head host's ssh session "
                    "stops this half)");
  command->callback([arguments] { run_up(*arguments); });
}

}  // namespace tagflow::cli
