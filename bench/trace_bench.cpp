// `tagflow bench trace`: what recording a run costs (tracing/README.md). The local demo cluster
// (bench/local_cluster.hpp, configs/local.yaml's nodes) runs as processes through `tagflow up`,
// stopped after a fixed number of env steps, in three ways: untraced, with `--trace` (every
// reaction, wait and message recorded, merged into LOG_DIR/trace.json at the end), and with
// `trace: {digests: true}` (also every data message's hash and bytes, for `tagflow diff`). Each
// way runs `reps` times, the ways taking turns so that a slow spell of the machine falls on all
// of them; the best run of each way is reported (env steps/s from the run summary, which times
// the processes' own run, not their start or the merge), with the ratios to the untraced runs
// and whether every run ended with the untraced digest (tracing must not change what is
// computed). Also: the merged trace's size and the merge's share of the traced run's wall time.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "bench/benchmarks.hpp"
#include "bench/local_cluster.hpp"
#include "common/loopback_ports.hpp"

namespace tagflow::bench {

namespace fs = std::filesystem;

BenchReport run_trace_bench(const BenchOptions& options) {
  const std::int64_t env_steps = options.quick ? 3200 : 20000;
  const int reps = options.quick ? 1 : 3;
  const fs::path dir =
      fs::temp_directory_path() / ("tagflow_trace_bench_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const int base = free_loopback_port_range(kLocalClusterPorts);
  if (base < 0) throw std::runtime_error("no free range of loopback ports");
  const std::string plain = local_cluster_file("trace-bench", base, env_steps);
  const std::string digests =
      local_cluster_file("trace-bench", base, env_steps, "trace: {digests: true}\n");

  double off = 0, traced = 0, with_digests = 0;  // best env steps/s of each way
  bool same_digest = true;
  std::string digest;
  double trace_bytes = 0;
  for (int rep = 0; rep < reps; ++rep) {
    const std::string n = std::to_string(rep);
    const LocalRun a = up_local(dir, "off" + n, plain);
    const LocalRun b = up_local(dir, "trace" + n, plain, "--trace");
    const LocalRun c = up_local(dir, "digests" + n, digests);
    if (digest.empty()) digest = a.digest;
    for (const LocalRun* run : {&a, &b, &c}) same_digest = same_digest && run->digest == digest;
    const auto rate = [](const LocalRun& run) {
      return static_cast<double>(run.env_steps) / run.seconds;
    };
    off = std::max(off, rate(a));
    traced = std::max(traced, rate(b));
    with_digests = std::max(with_digests, rate(c));
    trace_bytes = static_cast<double>(fs::file_size(dir / ("trace" + n) / "trace.json"));
  }
  BenchReport report("trace");
  report.add("env_steps", static_cast<double>(env_steps), "steps");
  report.add("untraced_env_steps_per_s", off, "steps/s");
  report.add("traced_env_steps_per_s", traced, "steps/s");
  report.add("digests_env_steps_per_s", with_digests, "steps/s");
  report.add_ratio("traced/untraced", "traced_env_steps_per_s", "untraced_env_steps_per_s");
  report.add_ratio("digests/untraced", "digests_env_steps_per_s", "untraced_env_steps_per_s");
  report.add("same_digest", same_digest ? 1.0 : 0.0, "bool");
  report.add("merged_trace_bytes", trace_bytes, "bytes");
  fs::remove_all(dir);
  return report;
}

}  // namespace tagflow::bench
