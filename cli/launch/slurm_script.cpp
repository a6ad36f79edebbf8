#include "cli/launch/slurm_script.hpp"

#include <algorithm>
#include <map>
#include <sstream>

#include "cli/launch/remote_hosts.hpp"
#include "nodes/cluster/process_plan.hpp"

namespace tagflow::cli {
namespace {

std::string slurm_key(const std::string& host, const std::string& key) {
  return "hosts." + host + ".slurm" + (key.empty() ? "" : "." + key);
}

void add_line(std::ostringstream& out, const std::string& option, const std::string& value) {
  if (!value.empty()) out << "#SBATCH --" << option << "=" << value << "\n";
}

void add_request(std::ostringstream& out, const cluster::SlurmRequest& request) {
  add_line(out, "nodes", std::to_string(request.nodes));
  add_line(out, "ntasks-per-node", "1");  // one tagflow launcher per node
  add_line(out, "partition", request.partition);
  add_line(out, "gres", request.gres);
  add_line(out, "cpus-per-task",
           request.cpus_per_task > 0 ? std::to_string(request.cpus_per_task) : "");
  add_line(out, "mem", request.mem);
  add_line(out, "time", request.time);
  add_line(out, "account", request.account);
  add_line(out, "constraint", request.constraint);
}

}  // namespace

std::vector<SlurmComponent> slurm_components(const cluster::ClusterConfig& config) {
  std::map<std::string, int> processes;
  for (const cluster::ProcessPlan& process : cluster::plan_processes(config)) {
    ++processes[process.host];
  }
  std::vector<SlurmComponent> components;
  for (const auto& [name, host] : config.hosts) {
    if (!host.slurm) {
      throw cluster::ConfigError(config.file, host.line, "hosts." + name,
                                 "`tagflow slurm` needs every host to be a Slurm resource "
                                 "(hosts." +
                                     name + ".slurm: {...}, configs/README.md)");
    }
    SlurmComponent component{name, *host.slurm, processes[name], config.coordinator.host == name};
    const int work = component.processes;  // the coordinator shares node 0
    if (component.request.nodes > std::max(work, 1)) {
      throw cluster::ConfigError(config.file, component.request.line, slurm_key(name, "nodes"),
                                 std::to_string(component.request.nodes) + " nodes for " +
                                     std::to_string(work) +
                                     " process(es): a node would have nothing to run");
    }
    components.push_back(std::move(component));
  }
  if (components.empty()) {
    throw cluster::ConfigError(config.file, 0, "hosts", "no Slurm host (hosts.NAME.slurm)");
  }
  // The job mints its own keys (slurm-node --mint-keys).
  cluster::refuse_keys_dir(
      config, "a Slurm job's keys are minted for it in runs/CLUSTER-JOBID/keys/ when it starts");
  return components;
}

std::vector<SlurmPartition> parse_sinfo_partitions(const std::string& text) {
  std::vector<SlurmPartition> partitions;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    SlurmPartition partition;
    if (!(fields >> partition.name >> partition.nodes)) continue;
    if (!partition.name.empty() && partition.name.back() == '*') {
      partition.name.pop_back();
      partition.is_default = true;
    }
    bool merged = false;
    for (SlurmPartition& known : partitions) {
      if (known.name != partition.name) continue;
      known.nodes += partition.nodes;
      known.is_default = known.is_default || partition.is_default;
      merged = true;
    }
    if (!merged) partitions.push_back(partition);
  }
  return partitions;
}

void check_slurm_partitions(const cluster::ClusterConfig& config,
                            const std::vector<SlurmComponent>& components,
                            const std::vector<SlurmPartition>& partitions) {
  for (const SlurmComponent& component : components) {
    const cluster::SlurmRequest& request = component.request;
    const SlurmPartition* found = nullptr;
    std::string names;
    for (const SlurmPartition& partition : partitions) {
      names += (names.empty() ? "" : ", ") + partition.name;
      const bool match =
          request.partition.empty() ? partition.is_default : partition.name == request.partition;
      if (match) found = &partition;
    }
    if (found == nullptr) {
      const std::string key = request.partition.empty() ? "" : "partition";
      throw cluster::ConfigError(
          config.file, request.line, slurm_key(component.host, key),
          (request.partition.empty() ? std::string("Slurm has no default partition")
                                     : "Slurm has no partition '" + request.partition + "'") +
              " (partitions: " + (names.empty() ? "none" : names) + ")");
    }
    if (request.nodes > found->nodes) {
      throw cluster::ConfigError(config.file, request.line, slurm_key(component.host, "nodes"),
                                 std::to_string(request.nodes) + " nodes, but partition " +
                                     found->name + " has " + std::to_string(found->nodes));
    }
  }
}

std::string slurm_batch_script(const cluster::ClusterConfig& config,
                               const std::vector<SlurmComponent>& components,
                               const SlurmScriptOptions& options) {
  std::ostringstream out;
  out << "#!/bin/bash\n"
      << "# Written by `tagflow slurm` for cluster " << config.name << " (" << options.file
      << ").\n# Submit it with sbatch; docs/slurm.md says what it does.\n";
  for (std::size_t k = 0; k < components.size(); ++k) {
    out << "# component " << k << ": host " << components[k].host
        << (components[k].coordinator ? " (the coordinator)" : "") << "\n";
  }
  // The step's options per component: srun takes no --cpus-per-task from sbatch's (Slurm 22.05
  // on), so each component's is asked again, or every launcher and its processes would get one
  // CPU where cores are bound; several components are one heterogeneous step, their options
  // separated by " : ".
  std::string step;
  for (std::size_t k = 0; k < components.size(); ++k) {
    if (k == 0) {
      add_line(out, "job-name", "tagflow-" + config.name);
      // A requeued job adds its attempt's lines to slurm-JOBID.out (Slurm truncates it otherwise).
      add_line(out, "open-mode", "append");
    } else {
      out << "#SBATCH hetjob\n";
    }
    add_request(out, components[k].request);
    const int cpus = components[k].request.cpus_per_task;
    step += std::string(k == 0 ? "" : " : ") +
            (components.size() > 1 ? "--het-group=" + std::to_string(k) + " " : "") +
            (cpus > 0 ? "--cpus-per-task=" + std::to_string(cpus) + " " : "") +
            "--kill-on-bad-exit=1";
  }
  const std::string launcher = shell_quote(options.tagflow) + " slurm-node " +
                               shell_quote(options.file) + " --run-dir \"$run_dir\"";
  const bool resumable = config.mode == cluster::Mode::reactor && config.checkpoint.every;
  out << "set -euo pipefail\n"
      << "umask 077  # the run directory and the job's keys: its user's only\n"
      << "first_run=\"${SLURM_SUBMIT_DIR:-$PWD}/runs/" << config.name << "-${SLURM_JOB_ID}\"\n"
      << "run_dir=\"$first_run\"\n";
  if (resumable) {
    // The earlier runs' directories, newest first, as the launchers' --resume-from arguments
    // ("$@": paths with spaces stay whole).
    out << "set --\n"
        << "# A requeued job (a node failed, scontrol requeue) runs again in a directory of its\n"
        << "# own and continues from the newest checkpoints of the earlier attempts.\n"
        << "if [ \"${SLURM_RESTART_COUNT:-0}\" -gt 0 ]; then\n"
        << "  run_dir=\"$first_run-requeue${SLURM_RESTART_COUNT}\"\n"
        << "  k=$((SLURM_RESTART_COUNT - 1))\n"
        << "  while [ \"$k\" -gt 0 ]; do\n"
        << "    set -- \"$@\" --resume-from \"$first_run-requeue$k\"\n"
        << "    k=$((k - 1))\n"
        << "  done\n"
        << "  set -- \"$@\" --resume-from \"$first_run\"\n"
        << "fi\n";
    for (const std::string& earlier : options.resume) {
      out << "set -- \"$@\" --resume-from " << shell_quote(earlier)
          << "  # tagflow slurm --resume\n";
    }
  } else {
    out << "# A requeued job (a node failed, scontrol requeue) runs again from the start, in a\n"
        << "# directory of its own: the earlier attempt's is left as it was (no checkpoint:).\n"
        << "if [ \"${SLURM_RESTART_COUNT:-0}\" -gt 0 ]; then "
           "run_dir=\"$first_run-requeue${SLURM_RESTART_COUNT}\"; fi\n";
  }
  out << "mkdir -p \"$run_dir\"\n"
      << launcher << " --mint-keys\n"
      << "srun " << step << " " << launcher << (resumable ? " \"$@\"" : "")
      << (options.summary.empty() ? "" : " --summary " + shell_quote(options.summary)) << "\n";
  return out.str();
}

}  // namespace tagflow::cli
