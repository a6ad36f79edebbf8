// SlurmScript: the batch script `tagflow slurm FILE` writes for a cluster file whose hosts are
// Slurm resources (`hosts.NAME.slurm`, configs/README.md; docs/slurm.md).
//
// Every host is one component of a heterogeneous job, in the order of the file's hosts (sorted by
// name): its `#SBATCH` lines (--nodes, one task per node, then partition, gres, cpus, memory,
// time, account and constraint when given), the components separated by `#SBATCH hetjob`. The
// script's body, run by Slurm on the first node of component 0:
//   1. makes the run directory RUN = $SLURM_SUBMIT_DIR/runs/CLUSTER-$SLURM_JOB_ID with umask 077
//      (only the job's user reads it; it must be on a file system every node sees);
//   2. mints the job's CURVE keys there (`tagflow slurm-node FILE --run-dir RUN --mint-keys`);
//   3. runs one step, `srun --het-group=0,...,K-1 --kill-on-bad-exit=1 tagflow slurm-node FILE
//      --run-dir RUN [--resume-from EARLIER]... [--summary PATH]`: one launcher per node
//      (cli/launch/slurm_allocation.hpp).
// A requeued job (SLURM_RESTART_COUNT N >= 1) runs in RUN-requeueN. With a reactor-mode file that
// has `checkpoint:`, its launchers get the earlier attempts' directories as --resume-from, newest
// first, and the run of `tagflow slurm FILE --resume EARLIER` (its requeued attempts first) last:
// each node continues from the newest checkpoints its host's node kept there
// (cli/launch/slurm_resume.hpp). Without `checkpoint:` a requeued job starts over.
//
// Pure functions over values; check_slurm_partitions() reads `sinfo` output given as text.
// Errors: cluster::ConfigError naming the file, the line and the key.
#pragma once

#include <string>
#include <vector>

#include "nodes/cluster/cluster_config.hpp"

namespace tagflow::cli {

/// One component of the heterogeneous job: a Slurm host of the file.
struct SlurmComponent {
  std::string host;
  cluster::SlurmRequest request;
  int processes = 0;  // processes dealt over its nodes (the coordinator, on node 0, not counted)
  bool coordinator = false;
};

/// The file's hosts as components, in order. Throws ConfigError when a host has no `slurm` (or
/// there is none), or a host asks for more nodes than it has processes (a node would idle).
std::vector<SlurmComponent> slurm_components(const cluster::ClusterConfig& config);

/// A partition as `sinfo -h -o "%P %D"` lists it ("debug* 2": default, 2 nodes).
struct SlurmPartition {
  std::string name;
  int nodes = 0;
  bool is_default = false;
};

/// The partitions in `sinfo -h -o "%P %D"` output (lines of one partition are summed).
std::vector<SlurmPartition> parse_sinfo_partitions(const std::string& text);

/// Throws ConfigError when a component names a partition Slurm does not have, or asks for more
/// nodes than its partition (the default one when it names none) has.
void check_slurm_partitions(const cluster::ClusterConfig& config,
                            const std::vector<SlurmComponent>& components,
                            const std::vector<SlurmPartition>& partitions);

struct SlurmScriptOptions {
  std::string file;     // the cluster file, absolute
  std::string tagflow;  // the tagflow executable, absolute
  std::string summary;  // --summary for the coordinator's launcher (empty: RUN/summary.json only)
  // --resume: an earlier job's run directories, absolute, newest first (its requeued attempts'
  // before it); empty: none.
  std::vector<std::string> resume;
};

/// The batch script described above.
std::string slurm_batch_script(const cluster::ClusterConfig& config,
                               const std::vector<SlurmComponent>& components,
                               const SlurmScriptOptions& options);

}  // namespace tagflow::cli
