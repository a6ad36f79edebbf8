// SlurmResume: how a Slurm job continues an earlier job's run from its checkpoints (docs/slurm.md,
// "A run that outlives its job"): a requeued job the run of its earlier attempts, a job whose
// script `tagflow slurm FILE --resume EARLIER` wrote that run.
//
// Every node's launcher records which of the file's hosts it runs and as which of that host's
// nodes: RUN/slurm-nodes/HOST/K holds the node's name, whose directory is RUN/NODE/. A node of a
// later job looks its own place (HOST, K) up in each earlier run, newest first, and takes the first
// whose directory kept checkpoint files; its own directory then starts as a copy of that one's
// record of the run (cluster.yaml, mode) with every file under checkpoints/ hard-linked (copied
// where the file system cannot link), so the earlier run's directory is left as it was. Its
// launcher resumes that directory as `tagflow up --resume` would (cli/launch/cluster_launcher.hpp):
// the coordinator's node chooses the newest usable checkpoint, the other nodes' processes load
// their parts of it, and a node whose parts are missing makes the coordinator fall back to an
// older checkpoint or the start (docs/recovery.md, "Across hosts").
//
// Errors: std::runtime_error naming the directory or file and the reason.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace tagflow::cli {

/// Writes RUN/slurm-nodes/HOST/K (K = `node`) holding `node_name`: where host HOST's node K ran.
void record_slurm_node(const std::string& run_dir, const std::string& host, int node,
                       const std::string& node_name);

/// RUN/NODE for host HOST's node K as RUN/slurm-nodes/HOST/K records it; "" when it is not recorded
/// or names no single directory of RUN.
[[nodiscard]] std::string recorded_node_directory(const std::string& run_dir,
                                                  const std::string& host, int node);

/// RUN and the directories of its job's requeued attempts (RUN-requeue1, RUN-requeue2, ... while
/// they exist), newest first: where that job's run went on.
[[nodiscard]] std::vector<std::string> job_attempts(const std::string& run_dir);

/// True when DIRECTORY/checkpoints holds at least one regular file.
[[nodiscard]] bool kept_checkpoints(const std::string& directory);

/// The directory of host HOST's node K in the first run of `earlier` (newest first) where it
/// kept checkpoint files; nullopt when none did.
[[nodiscard]] std::optional<std::string> earlier_node_directory(
    const std::vector<std::string>& earlier, const std::string& host, int node);

/// Starts `directory` (made here; it must not exist or be empty) as the continuation of `from`:
/// `from`'s cluster.yaml and mode copied, every file under its checkpoints/ hard-linked or
/// copied. Nothing in `from` is changed.
void continue_run_directory(const std::string& from, const std::string& directory);

}  // namespace tagflow::cli
