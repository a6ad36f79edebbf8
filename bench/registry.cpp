#include "bench/registry.hpp"

#include <spdlog/spdlog.h>

#include "bench/benchmarks.hpp"

namespace tagflow::bench {

const std::vector<BenchEntry>& benchmarks() {
  static const std::vector<BenchEntry> entries = {
      {"monitoring", "Prometheus metrics: cost of an update, of a series lookup, of a scrape",
       run_monitoring_bench, false},
      {"actors", "Actor mode: sampler→consumer messages/s by credit window, local and over TCP",
       run_actors_bench, false},
      {"codec", "MessagePack: tensors as one binary blob vs as arrays of floats", run_codec_bench,
       false},
      {"envs", "Environment steps per second: single env, vector env, plain loop", run_envs_bench,
       false},
      {"federation",
       "Coordinated tags/s over Unix sockets (TCP with TAGFLOW_LOCAL_LINKS=0), 2/4/8 federates, "
       "chain and fan-out/in",
       run_federation_bench, false},
      {"coordinator",
       "How far one coordinator goes: tags/s, grants/tag and its CPU per tag, 2 to 64 federates",
       run_coordinator_bench, false},
      {"learner",
       "LibTorch DQN: updates/s (CartPole net, 1350-64-2 MARL policy), inference latency", nullptr,
       true},
      {"marl",
       "MARL inference, TrafficJunction10-v1 (ten 1350-64-2 policies): plain loop, reactor and "
       "actors in one process and with inference in two processes, and the raw ZeroMQ ceiling of "
       "the two-process shape; seconds and p50/p99 per joint step",
       nullptr, true},
      {"serve",
       "Inference service for outside programs (ten 1350-64-2 policies): agent-actions/s and "
       "p50/p99 act latency at 1, 4, 16 clients vs a raw ZeroMQ round trip of the same bytes",
       nullptr, true},
      {"paper",
       "The Lingua Franca paper's workloads (gym, atari, qlearning, marl, broadcast, object) in "
       "every placement: "
       "plain loop, reactor 1/2 workers, federated processes, CAF in one process and across",
       run_paper_bench, false},
      {"reactors",
       "Reactor runtime vs CAF 0.17 actors: ping-pong, broadcast + gather (int, 10 MiB)",
       run_reactors_bench, false},
      {"recovery",
       "Checkpoints: env steps/s of the local cluster with a checkpoint about every 5 s vs none, "
       "and bytes and ms per checkpoint for each node kind",
       run_recovery_bench, false},
      {"trace",
       "Tracing: env steps/s of the local cluster untraced, with --trace and with per-message "
       "digests; the same digest either way",
       run_trace_bench, false},
      {"replay", "Prioritized replay: K-ary vs binary sum tree (insert, sample, update), table",
       run_replay_bench, false},
  };
  return entries;
}

BenchReport run_benchmark(const BenchEntry& entry, const BenchOptions& options) {
  spdlog::set_level(spdlog::level::warn);
  return entry.run(options);
}

const BenchEntry* find_benchmark(const std::string& name) {
  for (const BenchEntry& entry : benchmarks()) {
    if (entry.name == name) return &entry;
  }
  return nullptr;
}

}  // namespace tagflow::bench
