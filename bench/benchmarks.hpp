// Entry points of the benchmarks built into the tagflow CLI; bench/registry.cpp lists them.
#pragma once

#include <string>
#include <vector>

#include "bench/registry.hpp"

namespace tagflow::bench {

BenchReport run_monitoring_bench(const BenchOptions& options);
BenchReport run_actors_bench(const BenchOptions& options);
BenchReport run_codec_bench(const BenchOptions& options);
BenchReport run_envs_bench(const BenchOptions& options);
BenchReport run_federation_bench(const BenchOptions& options);
BenchReport run_coordinator_bench(const BenchOptions& options);
/// Defined in the tagflow-torch executable (LibTorch), not in tagflow_bench.
BenchReport run_learner_bench(const BenchOptions& options);
/// Defined in the tagflow-torch executable (LibTorch), not in tagflow_bench.
BenchReport run_marl_bench(const BenchOptions& options);
/// `tagflow-torch bench-marl-worker ADDRESS INDEX SERVERS ENV SERVER_PUBLIC_KEY`: one inference
/// server of `tagflow bench marl`'s raw ceiling, a CURVE client of that server key (started by it,
/// never by hand). Returns the exit code.
int run_marl_raw_server(const std::vector<std::string>& args);
BenchReport run_serve_bench(const BenchOptions& options);
BenchReport run_paper_bench(const BenchOptions& options);
BenchReport run_reactors_bench(const BenchOptions& options);
BenchReport run_recovery_bench(const BenchOptions& options);
BenchReport run_trace_bench(const BenchOptions& options);
BenchReport run_replay_bench(const BenchOptions& options);

}  // namespace tagflow::bench
