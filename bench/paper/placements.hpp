// The placements `tagflow bench paper` runs every round workload in (round_workload.hpp), all
// timing the same rounds with the same kernels:
//   - plain loop: the driver calls every worker kernel in turn on one thread, no framework (the
//     ceiling);
//   - reactor mode in one process: a driver reactor broadcasting over `after 0` to a bank of
//     worker reactors and gathering through a multiport (the paper's LF program), 1 or 2
//     scheduler workers;
//   - reactor mode as federated processes: the same driver and workers, one federate per node,
//     each worker a child process of this executable (`tagflow bench-paper-worker`), under a
//     coordinator in this process, over ZeroMQ on TCP loopback;
//   - raw processes, the federated placement's ceiling: the same kernels in the same processes
//     exchanging the same payloads in the same pattern over plain ZeroMQ + MessagePack (no tags,
//     no coordinator, no checks, no digests), over the transport the federation uses;
//   - actor mode (CAF 0.17) in one process: a driver actor sending to N worker actors, each
//     returning its answer (payloads shared, not copied);
//   - actor mode across processes: each worker actor in a child process, published with CAF's
//     middleman and reached with remote_actor over TCP loopback.
// Every run returns the seconds from the first request to the last answer of the last round
// (process start-up and connection set-up excluded) and throws std::runtime_error if an answer
// was lost or malformed or a child failed.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "bench/paper/round_workload.hpp"

namespace caf {
class actor_system;
}

namespace tagflow::bench::paper {

struct RoundRun {
  double seconds = 0.0;
  std::uint64_t answers = 0;
};

RoundRun run_plain_loop(const RoundWorkload& workload, std::FILE* print_to = nullptr);
RoundRun run_reactor_in_process(const RoundWorkload& workload, unsigned workers,
                                std::FILE* print_to = nullptr);
RoundRun run_reactor_processes(const RoundWorkload& workload);
RoundRun run_raw_processes(const RoundWorkload& workload);
RoundRun run_caf_in_process(caf::actor_system& system, const RoundWorkload& workload);
RoundRun run_caf_processes(const RoundWorkload& workload);

/// `tagflow bench-paper-worker ARGS`: one worker of a multi-process placement (started by the
/// two run_*_processes functions, never by hand). Returns the process exit code.
int run_paper_worker_process(const std::vector<std::string>& args);

/// The kinds of worker process run_paper_worker_process dispatches to: worker `index` as a
/// federate of the coordinator at `address`, as a CAF actor published on a port it writes to
/// `port_file`, or as a raw ZeroMQ worker of the driver at `address`.
int run_reactor_worker_federate(const RoundWorkload& workload, const std::string& address,
                                std::size_t index);
int run_caf_worker_process(const RoundWorkload& workload, const std::string& port_file,
                           std::size_t index);
int run_raw_worker_process(const RoundWorkload& workload, const std::string& address,
                           std::size_t index);

}  // namespace tagflow::bench::paper
