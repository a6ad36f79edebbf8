// TraceCollector: the coordinator's side of PROTOCOL.md §8.4 in `tagflow coordinator --results
// DIR` of a traced run: the trace files (PROCESS.trace.json, and with `trace.digests` each
// replica's REPLICA.values.tsv and .values.bin) of the processes away from the coordinator (other
// hosts', or other Slurm nodes' or pods' of its host: cluster::runs_with_coordinator()), handed
// over by their launchers in TRACE_PART pieces, land in DIR/trace/ beside those of the processes
// beside it, where the coordinator's launcher merges them into DIR/trace.json (tracing/README.md).
//
// receive() accepts a piece only of a file of such a process, sent with the key of one of that
// process's replicas, at the offset where the stored bytes end (a piece sent again after a lost
// answer is answered again), within a file of at most kMaxTraceFileBytes whose total never
// changes. Pieces are appended to DIR/trace/NAME.part, renamed to NAME once whole. Anything else
// is refused with the reason.
// Not thread-safe: the coordinator's loop thread only.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "coordinator/coordinator.hpp"
#include "nodes/cluster/cluster_config.hpp"

namespace tagflow::cli {

/// The largest trace file a launcher may hand over (a ring of 10^7 events per thread, or 4 GiB of
/// kept values with their lines).
inline constexpr std::uint64_t kMaxTraceFileBytes = std::uint64_t{8} << 30;

class TraceCollector {
 public:
  TraceCollector(const cluster::ClusterConfig& config, const std::string& dir);

  /// A TRACE_PART from the launcher speaking for `federate` (the key it authenticated with).
  coordinator::TraceReceipt receive(const std::string& federate,
                                    const coordinator::ControlMessage& part);
  /// True when every file of the other hosts is stored whole.
  [[nodiscard]] bool complete() const { return missing().empty(); }
  /// The files of the other hosts not stored whole yet.
  [[nodiscard]] std::vector<std::string> missing() const;

 private:
  struct File {
    std::vector<std::string> senders;  // the replicas of its process
    std::uint64_t total = 0;           // fixed by the first piece
    std::uint64_t stored = 0;
    bool whole = false;
  };
  std::string dir_;  // DIR/trace
  std::map<std::string, File> files_;
};

/// The trace files of `process` (tracing/README.md): PROCESS.trace.json and, with digests, its
/// replicas' value logs.
[[nodiscard]] std::vector<std::string> trace_files_of(const cluster::ClusterConfig& config,
                                                      const std::string& process,
                                                      const std::vector<std::string>& replicas);

}  // namespace tagflow::cli
