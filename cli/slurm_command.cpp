// `tagflow slurm FILE [--out PATH] [--summary PATH] [--resume RUN] [--submit]`: the batch script
// that runs a cluster file whose hosts are Slurm resources as one heterogeneous job
// (cli/launch/slurm_script.hpp), checked against the file and Slurm's partitions before anything
// is submitted; `--resume` makes the job continue an earlier job's run from its checkpoints;
// `--submit` hands the script to sbatch and prints the job id.
// `tagflow slurm-node FILE --run-dir DIR [--resume-from EARLIER]... [--summary PATH]
// [--mint-keys]`: what that script runs, once with --mint-keys (the job's keys in DIR/keys), then
// on every node of the job's step: the node's launcher (cli/launch/slurm_allocation.hpp),
// `tagflow up` of that node's processes with the AllocatedNode backend
// (cli/launch/launch_backend.hpp), logging to DIR/NODE/, continuing the newest of the EARLIER
// runs where its place kept checkpoints (cli/launch/slurm_resume.hpp).
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/launch/cluster_launcher.hpp"
#include "cli/launch/launch_plan.hpp"
#include "cli/launch/remote_hosts.hpp"
#include "cli/launch/slurm_allocation.hpp"
#include "cli/launch/slurm_resume.hpp"
#include "cli/launch/slurm_script.hpp"
#include "common/atomic_file.hpp"
#include "common/log_text.hpp"
#include "common/state_stream.hpp"
#include "hosts/replica_params_check.hpp"
#include "transport/curve_keys.hpp"

namespace tagflow::cli {
namespace {

struct SlurmArguments {
  std::string file;
  std::string out;
  std::string summary;
  std::string resume;
  bool submit = false;
};

struct SlurmNodeArguments {
  std::string file;
  std::string run_dir;
  std::string summary;
  std::vector<std::string> resume_from;
  bool mint_keys = false;
};

std::string absolute(const std::string& path) {
  return path.empty() ? path : std::filesystem::absolute(path).lexically_normal().string();
}

/// The file, loaded and checked as `tagflow up` checks it, and its Slurm components.
std::vector<SlurmComponent> load_components(const std::string& command, const std::string& file,
                                            cluster::ClusterConfig& config) {
  try {
    config = cluster::load_cluster_config(file);
    hosts::check_replica_params(config);
    return slurm_components(config);
  } catch (const cluster::ConfigError& e) {
    fail_command(command, e.what(), kExitBadFile);
  }
}

/// What a Slurm client said, a line each under the line that says it failed (its messages are
/// several lines: the reason, then where it looked).
void print_lines(const std::string& said) {
  std::istringstream lines(said);
  for (std::string line; std::getline(lines, line);) {
    std::cerr << "  | " << single_line(line) << "\n";
  }
}

/// What Slurm can give, when its client reaches a controller; a request it cannot meet is
/// refused with the file's line and key.
void check_against_slurm(const cluster::ClusterConfig& config,
                         const std::vector<SlurmComponent>& components) {
  const std::string sinfo = find_on_path("sinfo");
  if (sinfo.empty()) {
    std::cerr << "tagflow slurm: no sinfo on PATH: partitions and node counts not checked\n";
    return;
  }
  const SlurmToolResult listed = run_slurm_tool(shell_quote(sinfo) + " -h -o '%P %D'");
  if (listed.exit_code != 0) {
    std::cerr << "tagflow slurm: sinfo failed (exit " << listed.exit_code
              << "), partitions and node counts not checked:\n";
    print_lines(listed.said());
    return;
  }
  std::cerr << listed.errors;  // its warnings, if any
  try {
    check_slurm_partitions(config, components, parse_sinfo_partitions(listed.output));
  } catch (const cluster::ConfigError& e) {
    fail_command("slurm", e.what(), kExitBadFile);
  }
}

/// `--resume RUN`: refused (exit 2) unless the file can resume and RUN is a run of it that has
/// not finished (as its newest attempt says); a finished one ends the command with exit 0 and
/// nothing written.
void check_resume(const std::vector<std::string>& attempts, const std::string& file,
                  const cluster::ClusterConfig& config) {
  if (attempts.empty()) return;
  const std::string& resume = attempts.back();
  const std::string prefix = "--resume " + resume + ": ";
  if (config.mode != cluster::Mode::reactor || !config.checkpoint.every) {
    fail_command("slurm", "--resume needs a reactor-mode file with checkpoint:", kExitBadFile);
  }
  if (std::error_code error; !std::filesystem::is_directory(resume, error)) {
    fail_command(
        "slurm",
        prefix + (std::filesystem::exists(resume, error) ? "not a directory" : "no such directory"),
        kExitBadFile);
  }
  // The coordinator runs on its host's node 0: that node's directory holds the run's record, in
  // the newest attempt that got as far as recording it.
  std::string head;
  for (const std::string& attempt : attempts) {
    head = recorded_node_directory(attempt, config.coordinator.host, 0);
    if (!head.empty()) break;
  }
  if (head.empty()) {
    fail_command("slurm",
                 prefix + "not the run directory of a job that `tagflow slurm` wrote " +
                     "(runs/CLUSTER-JOBID): no slurm-nodes/" + config.coordinator.host +
                     "/0 there naming the directory of the coordinator's node",
                 kExitBadFile);
  }
  const std::string ran = head + "/" + kRunFile;
  std::string text, ran_text;
  try {
    text = read_whole_file(file);
    ran_text = read_whole_file(ran);
  } catch (const StateError& e) {
    fail_command("slurm", prefix + e.what(), kExitBadFile);
  }
  if (text != ran_text) {
    fail_command("slurm",
                 prefix + file + " is not the file this run started with (" + ran +
                     "): resume it with that file",
                 kExitBadFile);
  }
  if (const std::string summary = head + "/" + kSummaryFile; std::filesystem::exists(summary)) {
    std::cerr << "tagflow slurm: " << prefix << "that run finished (" << summary
              << "): nothing to resume, no script written\n";
    throw CLI::RuntimeError(kExitOk);
  }
}

void run_slurm(const SlurmArguments& arguments) {
  cluster::ClusterConfig config;
  const auto components = load_components("slurm", arguments.file, config);
  const std::vector<std::string> resume = arguments.resume.empty()
                                              ? std::vector<std::string>{}
                                              : job_attempts(absolute(arguments.resume));
  check_resume(resume, arguments.file, config);
  check_against_slurm(config, components);
  const std::string script = slurm_batch_script(
      config, components,
      {absolute(arguments.file), own_executable(), absolute(arguments.summary), resume});
  std::string out = arguments.out;
  if (out.empty() && arguments.submit) out = "tagflow-" + config.name + ".sbatch";
  if (out.empty()) {
    std::cout << script;
    return;
  }
  // As every output path of the commands: its directories are made, one that cannot be, or a
  // path that is a device, a pipe or a directory, is a bad argument; the file is written whole.
  if (const std::string why = unwritable_output("--out", out); !why.empty()) {
    fail_command("slurm", why, kExitBadFile);
  }
  try {
    write_file_atomically(out, script);
  } catch (const AtomicFileError& e) {
    fail_command("slurm", "--out " + out + ": " + e.what(), kExitBadFile);
  }
  std::cerr << "tagflow slurm: wrote " << out << "\n";
  if (!arguments.submit) return;
  const std::string sbatch = find_on_path("sbatch");
  if (sbatch.empty()) fail_command("slurm", "--submit needs sbatch on PATH", kExitFailed);
  const SlurmToolResult submitted =
      run_slurm_tool(shell_quote(sbatch) + " --parsable " + shell_quote(out));
  if (submitted.exit_code != 0) {
    std::cerr << "tagflow slurm: sbatch failed (exit " << submitted.exit_code << "):\n";
    print_lines(submitted.said());
    throw CLI::RuntimeError(kExitFailed);
  }
  std::cerr << submitted.errors;  // its warnings, if any
  const std::string id = submitted.output.substr(0, submitted.output.find_first_of(";\n"));
  std::cout << id << "\n";
  std::cerr << "tagflow slurm: submitted job " << id << " (squeue -j " << id << ")\n";
}

/// Records where this node runs; with --resume-from, starts its directory from the newest
/// earlier run in which its place kept checkpoints and has the launcher resume it.
void continue_earlier_run(const SlurmNodeArguments& arguments, LaunchOptions& launch) {
  try {
    record_slurm_node(arguments.run_dir, launch.host, launch.node, launch.node_name);
  } catch (const std::runtime_error& e) {
    fail_command("slurm-node", e.what(), kExitFailed);
  }
  if (arguments.resume_from.empty()) return;
  const std::string place = "host " + launch.host + "'s node " + std::to_string(launch.node) +
                            " (" + launch.node_name + ")";
  const std::optional<std::string> from =
      earlier_node_directory(arguments.resume_from, launch.host, launch.node);
  if (!from) {
    std::cerr << "tagflow slurm-node: no checkpoint of " << place << " in the earlier run(s) ("
              << arguments.resume_from.front() << (arguments.resume_from.size() > 1 ? ", ..." : "")
              << "): its processes start without one\n";
    return;
  }
  // A run continued with another file would end with a digest neither file gives.
  const std::string ran = *from + "/" + kRunFile;
  bool same_file = false;
  try {
    same_file = read_whole_file(arguments.file) == read_whole_file(ran);
  } catch (const StateError& e) {
    fail_command("slurm-node", std::string("cannot continue ") + *from + ": " + e.what(),
                 kExitFailed);
  }
  if (!same_file) {
    fail_command("slurm-node",
                 arguments.file + " is not the file the earlier run started with (" + ran +
                     "): put that file back to continue it, or submit a new job of this file",
                 kExitBadFile);
  }
  try {
    continue_run_directory(*from, launch.log_dir);
  } catch (const std::runtime_error& e) {
    fail_command("slurm-node", e.what(), kExitFailed);
  }
  std::cerr << "tagflow slurm-node: " << place << " continues " << *from
            << " (its checkpoints linked into " << launch.log_dir << "/checkpoints)\n";
  launch.resume_run = launch.log_dir;
  launch.log_dir.clear();
}

void run_slurm_node(const SlurmNodeArguments& arguments) {
  cluster::ClusterConfig config;
  const auto components = load_components("slurm-node", arguments.file, config);
  if (arguments.mint_keys) {
    try {
      const std::string keys = mint_run_keys(config, arguments.run_dir);
      std::cerr << "tagflow slurm-node: this job's keys in " << keys << "/\n";
    } catch (const transport::CurveKeyError& e) {
      fail_command("slurm-node", std::string("cannot mint this job's keys: ") + e.what(),
                   kExitFailed);
    }
    return;
  }
  LaunchOptions launch;
  try {
    const SlurmPlace place =
        slurm_place([](const char* name) { return std::getenv(name); }, scontrol_hostnames);
    std::vector<std::string> hosts;
    for (const SlurmComponent& component : components) hosts.push_back(component.host);
    if (place.nodes.size() != components.size()) {
      fail_command("slurm-node",
                   "the job has " + std::to_string(place.nodes.size()) + " component(s), " +
                       arguments.file + " has " + std::to_string(components.size()) +
                       " Slurm host(s)",
                   kExitBadFile);
    }
    const std::string value = addresses_value(hosts, place, resolve_node_address);
    ::setenv(cluster::kNodeAddressesVariable, value.c_str(), 1);
    // Every launcher writes the same line: what `tagflow monitoring prometheus-config` needs
    // outside the allocation (docs/slurm.md).
    std::ofstream(std::filesystem::path(arguments.run_dir) / "addresses") << value << "\n";
    launch.host = hosts[static_cast<std::size_t>(place.component)];
    launch.node = place.node;
    launch.manager = NodeManager::slurm;
    launch.node_name = place.node_name;
  } catch (const std::runtime_error& e) {
    fail_command("slurm-node", e.what(), kExitFailed);
  }
  launch.file = arguments.file;
  launch.log_dir = (std::filesystem::path(arguments.run_dir) / launch.node_name).string();
  continue_earlier_run(arguments, launch);
  launch.run_keys = (std::filesystem::path(arguments.run_dir) / "keys").string();
  launch.summary_path = arguments.summary;
  launch.quiet = true;
  launch.tagflow = own_executable();
  const int code = launch_cluster(launch);
  if (code != 0) throw CLI::RuntimeError(code);
}

}  // namespace

void add_slurm_command(CLI::App& app) {
  auto arguments = std::make_shared<SlurmArguments>();
  auto* command = app.add_subcommand(
      "slurm",
      "Write the Slurm batch script that runs a cluster file whose hosts are Slurm resources as "
      "one heterogeneous job (docs/slurm.md); --submit hands it to sbatch");
  command->add_option("file", arguments->file, "Cluster file (configs/README.md)")->required();
  command->add_option("--out", arguments->out,
                      "Write the script here (default: stdout; with --submit "
                      "tagflow-CLUSTER.sbatch)");
  command->add_option("--summary", arguments->summary,
                      "Where the coordinator's launcher also writes the run summary JSON");
  command->add_option("--resume", arguments->resume,
                      "Continue this earlier job's run (its runs/CLUSTER-JOBID) from its "
                      "checkpoints");
  command->add_flag("--submit", arguments->submit,
                    "Submit the script with sbatch; print the job id");
  command->callback([arguments] { run_slurm(*arguments); });

  auto node_arguments = std::make_shared<SlurmNodeArguments>();
  auto* node = app.add_subcommand(
      "slurm-node",
      "Inside the job `tagflow slurm` wrote: this node's launcher (one per node, run by srun)");
  node->add_option("file", node_arguments->file, "Cluster file")->required();
  node->add_option("--run-dir", node_arguments->run_dir, "The job's run directory")->required();
  node->add_option("--summary", node_arguments->summary, "Also write the run summary JSON here");
  node->add_option("--resume-from", node_arguments->resume_from,
                   "An earlier run this one continues from its checkpoints (newest first; "
                   "repeatable)");
  node->add_flag("--mint-keys", node_arguments->mint_keys,
                 "Only mint the job's keys in RUN_DIR/keys");
  node->callback([node_arguments] { run_slurm_node(*node_arguments); });
}

}  // namespace tagflow::cli
