// `tagflow bench marl` (run by tagflow-torch): the Lingua Franca paper's MARL inference workload —
// TrafficJunction10-v1, ten agents, one 1350→64→2 policy each, greedy actions every joint step —
// in every placement tagflow has, in one run:
//   - plain loop: the env and one stacked forward pass (rl/learning/stacked_mlp.hpp) per joint
//     step, no framework: the ceiling;
//   - reactor, one process: the multi_agent node and one inference server hosting the ten
//     policies as reactors of one process (hosts/reactor/single_process_cluster.hpp);
//   - reactor, inference in two other processes: configs/marl-serve.yaml's shape (car_0..4 and
//     car_5..9 on two servers) run by `tagflow up` as federated processes over loopback.
//   - actor mode, one process: the one-server file as CAF actors (no logical time, credits);
//   - actor mode, inference in two other processes: the two-server file as CAF actors in three
//     processes over TLS, the placement of the federated reactor row.
// Each reports the run's wall seconds and the wall time per joint step (p50, p99, measured between
// the env node's consecutive steps). 100,000 joint steps (the paper's count); --quick: 1,000.
// `--only tj4` runs TrafficJunction4-v1 (four agents, 324→64→2 policies) instead of the default
// TrafficJunction10-v1 (`--only tj10`); `tagflow bench paper` runs both.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/benchmarks.hpp"
#include "hosts/actor/actor_cluster.hpp"
#include "hosts/reactor/single_process_cluster.hpp"
#include "rl/envs/registry.hpp"
#include "rl/learning/stacked_mlp.hpp"

namespace tagflow::bench {
namespace {

/// Which TrafficJunction: its env id and agent count (set once, from --only).
struct MarlShape {
  std::string env = "TrafficJunction10-v1";
  int agents = 10;
  double paper_seconds = 179.11;  // Lingua Franca, 100k joint steps (arXiv 2312.04704)
};
MarlShape shape;

/// The serve cluster with `servers` inference replicas, stopping after `steps` joint steps.
std::string serve_file(int servers, std::int64_t steps, int port,
                       const std::string& mode = "reactor") {
  std::ostringstream f;
  f << "cluster: marl-bench\nmode: " << mode << "\nseed: 5\n"
    << "coordinator: {port: " << port << "}\n"
    << "policies:\n  car: {hidden: \"64\", per_agent: true}\n"
    << "nodes:\n"
    << "  junction: {kind: multi_agent, data_port: " << port + 1 << ", params: {env: " << shape.env
    << ", epsilon_start: 0, epsilon_end: 0, "
       "eval_episodes: 0}}\n"
    << "  inference: {kind: inference, replicas: " << servers << ", data_port: " << port + 2
    << "}\n"
    << "connections:\n"
    << "  - {from: junction.observations, to: inference.observations}\n"
    << "  - {from: inference.actions, to: junction.actions, after: 0}\n"
    << "stop: {env_steps: " << steps << ", seconds: 600}\n";
  return f.str();
}

double quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0.0;
  const auto k = static_cast<std::size_t>(q * static_cast<double>(values.size() - 1));
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(k), values.end());
  return values[k];
}

void add_row(BenchReport& report, const std::string& name, double seconds, double p50, double p99) {
  report.add(name + "_seconds", seconds, "s");
  report.add(name + "_step_p50", p50 * 1e6, "us");
  report.add(name + "_step_p99", p99 * 1e6, "us");
}

/// The env plus one stacked forward per joint step.
void plain_loop(BenchReport& report, std::int64_t steps) {
  auto env = envs::make_multi_agent_env(shape.env);
  const int agents = shape.agents;
  const learning::MlpSpec spec{static_cast<int>(env->spec().observation_space.size()), {64}, 2};
  learning::StackedMlp policies(spec, agents, 1, 5);
  std::vector<float> observations(static_cast<std::size_t>(agents * spec.input_size));
  std::vector<float> rewards(agents);
  std::vector<std::uint8_t> dones(agents);
  std::vector<std::int64_t> actions(agents);
  std::vector<double> intervals;
  intervals.reserve(static_cast<std::size_t>(steps));
  env->reset(5, envs::Span<float>(observations));
  const auto start = std::chrono::steady_clock::now();
  auto last = start;
  for (std::int64_t s = 0; s < steps; ++s) {
    policies.act(observations.data(), actions.data());
    const envs::MultiAgentStepInfo info =
        env->step(envs::Span<const std::int64_t>(actions), envs::Span<float>(observations),
                  envs::Span<float>(rewards), envs::Span<std::uint8_t>(dones));
    if (info.episode_done) env->reset(std::nullopt, envs::Span<float>(observations));
    const auto now = std::chrono::steady_clock::now();
    intervals.push_back(std::chrono::duration<double>(now - last).count());
    last = now;
  }
  add_row(report, "plain_loop", std::chrono::duration<double>(last - start).count(),
          quantile(intervals, 0.5), quantile(intervals, 0.99));
}

void reactor_single(BenchReport& report, std::int64_t steps) {
  const cluster::ClusterConfig config =
      cluster::parse_cluster_config(serve_file(1, steps, 7860), "marl-bench.yaml");
  const auto start = std::chrono::steady_clock::now();
  const hosts::RunSummary summary = hosts::run_single_process_cluster(config, {});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  add_row(report, "reactor_one_process", seconds, summary.joint_step_p50.value_or(0.0),
          summary.joint_step_p99.value_or(0.0));
}

/// The same one-server file as CAF actors in one actor system (actor mode, placement single).
void actor_single(BenchReport& report, std::int64_t steps) {
  cluster::ClusterConfig config =
      cluster::parse_cluster_config(serve_file(1, steps, 7860), "marl-bench.yaml");
  config.mode = cluster::Mode::actor;
  hosts::ActorClusterOptions options;
  const auto start = std::chrono::steady_clock::now();
  const hosts::RunSummary summary = hosts::run_actor_cluster(config, options);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  add_row(report, "actor_one_process", seconds, summary.joint_step_p50.value_or(0.0),
          summary.joint_step_p99.value_or(0.0));
}

/// `tagflow up` of the two-server file as processes (reactor mode: federated; actor mode: CAF
/// actors over TLS); the launcher beside this binary. The row is `row`.
void processes(BenchReport& report, std::int64_t steps, const std::string& mode,
               const std::string& row) {
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe");
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("tagflow_marl_bench_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "serve.yaml") << serve_file(2, steps, 7870, mode);
  const std::string command = (self.parent_path() / "tagflow").string() + " up " +
                              (dir / "serve.yaml").string() + " --quiet --summary " +
                              (dir / "summary.json").string() + " --log-dir " +
                              (dir / "logs").string() + " > " + (dir / "up.log").string() + " 2>&1";
  const auto start = std::chrono::steady_clock::now();
  const int code = std::system(command.c_str());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (code != 0) {
    throw std::runtime_error("tagflow up of the two-server MARL cluster (" + mode +
                             " mode) failed (see " + (dir / "up.log").string() + ")");
  }
  std::ifstream in(dir / "summary.json");
  const nlohmann::json summary = nlohmann::json::parse(in);
  const nlohmann::json& step = summary.at("joint_step_seconds");
  add_row(report, row, seconds, step.at("p50").get<double>(), step.at("p99").get<double>());
  std::filesystem::remove_all(dir);
}

}  // namespace

BenchReport run_marl_bench(const BenchOptions& options) {
  const std::int64_t steps = options.quick ? 1000 : 100000;
  if (options.only == "tj4") {
    shape = MarlShape{"TrafficJunction4-v1", 4, 71.64};
  } else if (options.only.empty() || options.only == "tj10") {
    shape = MarlShape{};
  } else {
    throw std::invalid_argument("tagflow bench marl: --only takes tj4 or tj10, not '" +
                                options.only + "'");
  }
  BenchReport report("marl");
  report.add("joint_steps", static_cast<double>(steps), "steps");
  plain_loop(report, steps);
  reactor_single(report, steps);
  processes(report, steps, "reactor", "reactor_inference_2_processes");
  actor_single(report, steps);
  processes(report, steps, "actor", "actor_inference_2_processes");
  report.add_ratio("actor_one_process/reactor_one_process", "actor_one_process_seconds",
                   "reactor_one_process_seconds");
  report.add_ratio("actor_inference_2_processes/reactor_inference_2_processes",
                   "actor_inference_2_processes_seconds", "reactor_inference_2_processes_seconds");
  report.add_ratio("reactor_one_process/plain_loop", "reactor_one_process_seconds",
                   "plain_loop_seconds");
  report.add_ratio("reactor_inference_2_processes/reactor_one_process",
                   "reactor_inference_2_processes_seconds", "reactor_one_process_seconds");
  // Lingua Franca's figure for 100k joint steps, for the speedup (paper/reference_figures.hpp).
  report.add("lingua_franca_paper_100k", shape.paper_seconds, "s");
  if (!options.quick) {
    report.add_ratio("lingua_franca_paper/reactor_one_process", "lingua_franca_paper_100k",
                     "reactor_one_process_seconds");
  }
  return report;
}

}  // namespace tagflow::bench
