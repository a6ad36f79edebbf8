// `tagflow bench marl` (run by tagflow-torch): the Lingua Franca paper's MARL inference workload —
// TrafficJunction10-v1, ten agents, one 1350→64→2 policy each, greedy actions every joint step —
// in every placement tagflow has, in one run:
//   - plain loop: the env and one stacked forward pass (rl/learning/stacked_mlp.hpp) per joint
//     step, no framework: the ceiling. It plays the clusters' episodes: the env node's seed and
//     each policy's initial weights (serve_seeds()), so every placement does the same work;
//   - reactor, one process: the multi_agent node and one inference server hosting the ten
//     policies as reactors of one process (hosts/reactor/single_process_cluster.hpp);
//   - reactor, inference in two other processes: configs/marl-serve.yaml's shape (car_0..4 and
//     car_5..9 on two servers) run by `tagflow up` as federated processes over loopback.
//   - raw, inference in two other processes: the ceiling of the row above — the same env in this
//     process and the same stacked policies in two child processes (car_0..4, car_5..9), each
//     joint step sending every server its cars' observation rows (their non-zero floats, as the
//     env node sends them) and taking back their actions over plain ZeroMQ + MessagePack (no
//     tags, no coordinator, no digests), over the transport the federation uses
//     (transport/local_links.hpp) and encrypted with CURVE as the closed cluster's links are;
//     timed as `tagflow up` is, start-up included;
//   - actor mode, one process: the one-server file as CAF actors (no logical time, credits);
//   - actor mode, inference in two other processes: the two-server file as CAF actors in three
//     processes over TLS, the placement of the federated reactor row.
// Each reports the run's wall seconds and the wall time per joint step (p50, p99, measured between
// the env node's consecutive steps). The three one-process placements count from the end of their
// set-up (env reset, policies made, reactors or actors built and wired) to their last joint step,
// alike: the plain loop from its first step, the reactor its environment's run, the actors their
// host's wait (RunSummary::seconds); each also reports the wall time with its set-up
// (`*_with_setup_seconds`). The rows across processes count `tagflow up`'s whole run.
// 100,000 joint steps (the paper's count); --quick: 1,000.
// The three one-process placements keep the best of three runs, taken in turns; the federated
// row and its raw ceiling the better of two, in turns; the actor row across processes runs once
// (--quick: everything once).
// `--only tj4` runs TrafficJunction4-v1 (four agents, 324→64→2 policies) instead of the default
// TrafficJunction10-v1 (`--only tj10`); `tagflow bench paper` runs both. `--only tj10-in-process`
// (or tj4-in-process) runs the three one-process placements alone: the plain loop, the reactor and
// the actor runtime.
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
#include <string_view>
#include <vector>

#include <msgpack.hpp>
#include <zmq.hpp>

#include "bench/benchmarks.hpp"
#include "bench/marl_workloads.hpp"
#include "bench/paper/child_processes.hpp"
#include "bench/paper/raw_frames.hpp"
#include "bench/timing.hpp"
#include "common/float_bits.hpp"
#include "common/loopback_ports.hpp"
#include "hosts/actor/actor_cluster.hpp"
#include "hosts/reactor/single_process_cluster.hpp"
#include "nodes/kind/replica_config.hpp"
#include "rl/envs/registry.hpp"
#include "rl/learning/mlp_spec.hpp"
#include "rl/learning/stacked_mlp.hpp"
#include "transport/curve_keys.hpp"
#include "transport/local_links.hpp"

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
/// `cpu_bind: none`: the raw ceiling's processes are not bound to CPUs, so neither are the
/// cluster's (docs/clusters.md, "Where processes run"); the row compares the two on equal terms.
std::string serve_file(int servers, std::int64_t steps, int port,
                       const std::string& mode = "reactor") {
  std::ostringstream f;
  f << "cluster: marl-bench\nmode: " << mode << "\nseed: 5\ncpu_bind: none\n"
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

/// The serve cluster's seeds, so that the plain loop and the raw ceiling play the episodes the
/// clusters play, with the weights they start from: the env node's replica seed
/// (nodes/kind/replica_config.hpp) and policy p's seed, the cluster seed + p (PolicyBankConfig).
struct ServeSeeds {
  std::uint64_t env = 0;
  std::uint64_t policies = 0;
};
ServeSeeds serve_seeds() {
  const cluster::ClusterConfig config =
      cluster::parse_cluster_config(serve_file(1, 1, 7860), "marl-bench.yaml");
  return {nodes::replica_seed(config, config.nodes.front(), 0), config.seed};
}

/// The stacked policies of cars first .. first + count - 1, each with its weights in the cluster.
learning::StackedMlp car_policies(const learning::MlpSpec& spec, int first, int count) {
  learning::StackedMlp policies(spec, static_cast<std::size_t>(count), 1);
  const std::uint64_t seed = serve_seeds().policies;
  for (int i = 0; i < count; ++i) {
    policies.load(
        static_cast<std::size_t>(i),
        learning::init_mlp_parameters(spec, seed + static_cast<std::uint64_t>(first + i)));
  }
  return policies;
}

void add_row(BenchReport& report, const std::string& name, double seconds, double p50, double p99) {
  report.add(name + "_seconds", seconds, "s");
  report.add(name + "_step_p50", p50 * 1e6, "us");
  report.add(name + "_step_p99", p99 * 1e6, "us");
}

/// One in-process trial: its wall seconds after set-up and with it, and the wall time per joint
/// step (p50, p99).
struct Trial {
  double seconds = 0.0;
  double with_setup = 0.0;
  double p50 = 0.0;
  double p99 = 0.0;
};

/// Keeps in `best` the shorter of it and `trial`; the first trial (`first`) always.
void keep_shorter(Trial& best, const Trial& trial, bool first) {
  if (first || trial.seconds < best.seconds) best = trial;
}

/// The env side of a joint-step loop: the env (reset with the env node's seed), its arrays, and the
/// wall time between consecutive steps.
struct EnvLoop {
  std::unique_ptr<envs::MultiAgentEnv> env = envs::make_multi_agent_env(shape.env);
  int input = static_cast<int>(env->spec().observation_space.size());
  std::vector<float> observations =
      std::vector<float>(static_cast<std::size_t>(shape.agents) * static_cast<std::size_t>(input));
  std::vector<float> rewards = std::vector<float>(shape.agents);
  std::vector<std::uint8_t> dones = std::vector<std::uint8_t>(shape.agents);
  std::vector<std::int64_t> actions = std::vector<std::int64_t>(shape.agents);
  std::vector<double> intervals;
  std::chrono::steady_clock::time_point start;
  std::chrono::steady_clock::time_point last;

  explicit EnvLoop(std::int64_t steps) {
    intervals.reserve(static_cast<std::size_t>(steps));
    env->reset(serve_seeds().env, envs::Span<float>(observations));
    restart_clock();
  }
  /// The loop's seconds count from here (after its set-up).
  void restart_clock() { start = last = std::chrono::steady_clock::now(); }
  /// One joint step with `actions`; a new episode after the last one's end.
  void step() {
    const envs::MultiAgentStepInfo info =
        env->step(envs::Span<const std::int64_t>(actions), envs::Span<float>(observations),
                  envs::Span<float>(rewards), envs::Span<std::uint8_t>(dones));
    if (info.episode_done) env->reset(std::nullopt, envs::Span<float>(observations));
    const auto now = std::chrono::steady_clock::now();
    intervals.push_back(std::chrono::duration<double>(now - last).count());
    last = now;
  }
  [[nodiscard]] Trial trial(double seconds, double with_setup) const {
    return {seconds, with_setup, quantile(intervals, 0.5), quantile(intervals, 0.99)};
  }
};

/// The env plus one stacked forward per joint step.
Trial plain_loop(std::int64_t steps) {
  const auto start = std::chrono::steady_clock::now();
  EnvLoop loop(steps);
  const learning::MlpSpec spec{loop.input, {64}, 2};
  const learning::StackedMlp policies = car_policies(spec, 0, shape.agents);
  loop.restart_clock();
  for (std::int64_t s = 0; s < steps; ++s) {
    policies.act(loop.observations.data(), loop.actions.data());
    loop.step();
  }
  return loop.trial(std::chrono::duration<double>(loop.last - loop.start).count(),
                    std::chrono::duration<double>(loop.last - start).count());
}

Trial reactor_single(std::int64_t steps) {
  const cluster::ClusterConfig config =
      cluster::parse_cluster_config(serve_file(1, steps, 7860), "marl-bench.yaml");
  const auto start = std::chrono::steady_clock::now();
  const hosts::RunSummary summary = hosts::run_single_process_cluster(config, {});
  const double with_setup =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return {summary.seconds, with_setup, summary.joint_step_p50.value_or(0.0),
          summary.joint_step_p99.value_or(0.0)};
}

/// The same one-server file as CAF actors in one actor system (actor mode, placement single).
Trial actor_single(std::int64_t steps) {
  cluster::ClusterConfig config =
      cluster::parse_cluster_config(serve_file(1, steps, 7860), "marl-bench.yaml");
  config.mode = cluster::Mode::actor;
  hosts::ActorClusterOptions options;
  const auto start = std::chrono::steady_clock::now();
  const hosts::RunSummary summary = hosts::run_actor_cluster(config, options);
  const double with_setup =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return {summary.seconds, with_setup, summary.joint_step_p50.value_or(0.0),
          summary.joint_step_p99.value_or(0.0)};
}

/// The three in-process placements, best of `trials` each (the shortest run), taken in turns
/// (plain loop, reactor, actors, and again) so that a slow stretch of a shared machine falls on
/// every placement alike: on the 2-core build machine the plain loop's time moved by 1.7x between
/// two runs of this benchmark, and with one run each such a move went straight into the ratio.
void in_process_placements(BenchReport& report, std::int64_t steps, int trials) {
  const std::vector<std::pair<std::string, Trial (*)(std::int64_t)>> placements = {
      {"plain_loop", plain_loop},
      {"reactor_one_process", reactor_single},
      {"actor_one_process", actor_single}};
  std::vector<Trial> best(placements.size());
  for (int t = 0; t < trials; ++t) {
    for (std::size_t i = 0; i < placements.size(); ++i) {
      keep_shorter(best[i], placements[i].second(steps), t == 0);
    }
  }
  for (std::size_t i = 0; i < placements.size(); ++i) {
    add_row(report, placements[i].first, best[i].seconds, best[i].p50, best[i].p99);
    report.add(placements[i].first + "_with_setup_seconds", best[i].with_setup, "s");
  }
}

/// The raw servers' share of the cars: server `index` of `servers` hosts [first, first + count).
std::pair<int, int> cars_of(int index, int servers, int agents) {
  const int per = (agents + servers - 1) / servers;
  const int first = std::min(agents, index * per);
  return {first, std::min(agents, first + per) - first};
}

std::string raw_header(std::int64_t step) {
  msgpack::sbuffer buffer;
  msgpack::pack(buffer, step);
  return {buffer.data(), buffer.size()};
}

std::int64_t raw_step_of(const zmq::message_t& frame) {
  return msgpack::unpack(static_cast<const char*>(frame.data()), frame.size())
      .get()
      .as<std::int64_t>();
}

/// The raw ceiling of the two-server row: this process steps the env and two child processes
/// (`tagflow-torch bench-marl-worker`) each answer their cars' actions per joint step. Messages:
/// a MessagePack header (the joint step; -1 is the stop) and one frame: to a server, its cars'
/// observation rows as their non-zero floats (every position as a u32 counted from the first
/// float of its first row, then every value as a float32: the sparse form the federated env node
/// sends, so both carry the same bytes' worth; a server reads it in place), back, the cars' int64
/// actions; a server says hello with step -2 once connected.
/// The links are encrypted with CURVE, as the federated row's are (its cluster file has no
/// `security` section, so `tagflow up` mints keys for the run): this process's ROUTER is the
/// CURVE server with a key pair made for the run, each server a client with one of its own.
Trial raw_processes(std::int64_t steps) {
  constexpr int kServers = 2;
  const auto start = std::chrono::steady_clock::now();
  zmq::context_t context;
  zmq::socket_t router(context, zmq::socket_type::router);
  router.set(zmq::sockopt::linger, 0);
  const transport::CurveKeyPair keys = transport::generate_curve_key_pair();
  transport::make_curve_server(router, keys);
  router.bind("tcp://127.0.0.1:*");
  const std::string address = router.get(zmq::sockopt::last_endpoint);
  (void)transport::bind_local_twin(router, address);
  paper::ChildProcesses children;
  for (int i = 0; i < kServers; ++i) {
    children.start("server" + std::to_string(i),
                   {"bench-marl-worker", address, std::to_string(i), std::to_string(kServers),
                    shape.env, keys.public_key});
  }
  const auto receive = [&router](std::vector<zmq::message_t>& frames) {
    if (!paper::receive_frames(router, frames, std::chrono::seconds(60))) {
      throw std::runtime_error("raw MARL bench: a server did not answer within 60 s");
    }
  };
  std::vector<zmq::message_t> frames;
  for (int hello = 0; hello < kServers; ++hello) receive(frames);
  EnvLoop loop(steps);
  const int agents = shape.agents;
  std::vector<std::uint8_t> sparse;
  std::vector<std::uint32_t> set;
  // Cars [first, first + count)'s rows as their non-zero floats: positions, then values. One scan
  // with a mask per block of floats, as the federated env node's encoding (common/float_bits.hpp).
  const auto sparse_rows = [&loop, &sparse, &set](int first, int count) {
    const float* rows = loop.observations.data() + static_cast<std::ptrdiff_t>(first) * loop.input;
    const std::size_t floats = static_cast<std::size_t>(count) * loop.input;
    set.resize(floats);
    std::size_t nonzero = 0;
    for (std::size_t at = 0; at < floats; at += kFloatBlock) {
      const std::size_t n = std::min(kFloatBlock, floats - at);
      nonzero += list_set_bits(at, float_mask(rows + at, n), set.data() + nonzero);
    }
    sparse.resize(nonzero * 8);
    std::memcpy(sparse.data(), set.data(), nonzero * 4);
    for (std::size_t k = 0; k < nonzero; ++k) {
      std::memcpy(sparse.data() + (nonzero + k) * 4, rows + set[k], 4);
    }
  };
  // A request carries its rows' frame even when they have no non-zero float; the stop has none.
  const auto send = [&router](int server, const std::string& header, const void* data,
                              std::size_t bytes, bool rows) {
    const std::string id = "server" + std::to_string(server);
    router.send(zmq::buffer(id), zmq::send_flags::sndmore);
    router.send(zmq::buffer(header), rows ? zmq::send_flags::sndmore : zmq::send_flags::none);
    if (rows) router.send(zmq::buffer(data, bytes), zmq::send_flags::none);
  };
  for (std::int64_t s = 0; s < steps; ++s) {
    const std::string header = raw_header(s);
    for (int i = 0; i < kServers; ++i) {
      const auto [first, count] = cars_of(i, kServers, agents);
      sparse_rows(first, count);
      send(i, header, sparse.data(), sparse.size(), true);
    }
    for (int answered = 0; answered < kServers; ++answered) {
      receive(frames);
      const int server = frames.at(0).to_string().back() - '0';
      const auto [first, count] = cars_of(server, kServers, agents);
      if (frames.size() != 3 || raw_step_of(frames[1]) != s ||
          frames[2].size() != static_cast<std::size_t>(count) * sizeof(std::int64_t)) {
        throw std::runtime_error("raw MARL bench: a malformed answer at joint step " +
                                 std::to_string(s));
      }
      std::memcpy(loop.actions.data() + first, frames[2].data(), frames[2].size());
    }
    loop.step();
  }
  for (int i = 0; i < kServers; ++i) send(i, raw_header(-1), nullptr, 0, false);
  children.wait_all(std::chrono::seconds(60));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return loop.trial(seconds, seconds);
}

/// `tagflow up` of the two-server file as processes (reactor mode: federated; actor mode: CAF
/// actors over TLS); the launcher beside this binary.
Trial processes(std::int64_t steps, const std::string& mode) {
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe");
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("tagflow_marl_bench_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  // Free ports, so that a test running this beside another cluster does not meet it.
  const int base = free_loopback_port_range(3);
  if (base < 0) throw std::runtime_error("tagflow bench marl: no 3 free loopback ports");
  std::ofstream(dir / "serve.yaml") << serve_file(2, steps, base, mode);
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
  std::filesystem::remove_all(dir);
  return {seconds, seconds, step.at("p50").get<double>(), step.at("p99").get<double>()};
}

/// The rows across processes. The federated row and its raw ceiling keep the better of `trials`
/// runs each, taken in turns (federated, raw, and again), as the in-process placements are: a run
/// of either moved by up to 1.3x between two runs a minute apart on the 2-core build machine, and
/// with one run each such a move went straight into the ratio. The actor row runs once.
void process_placements(BenchReport& report, std::int64_t steps, int trials) {
  Trial federated;
  Trial raw;
  for (int t = 0; t < trials; ++t) {
    keep_shorter(federated, processes(steps, "reactor"), t == 0);
    keep_shorter(raw, raw_processes(steps), t == 0);
  }
  const Trial actors = processes(steps, "actor");
  add_row(report, "reactor_inference_2_processes", federated.seconds, federated.p50, federated.p99);
  add_row(report, "raw_inference_2_processes", raw.seconds, raw.p50, raw.p99);
  add_row(report, "actor_inference_2_processes", actors.seconds, actors.p50, actors.p99);
}

}  // namespace

int run_marl_raw_server(const std::vector<std::string>& args) {
  if (args.size() != 5) {
    std::fprintf(stderr, "bench-marl-worker: ADDRESS INDEX SERVERS ENV SERVER_PUBLIC_KEY\n");
    return 2;
  }
  const int index = std::stoi(args[1]);
  const auto env = envs::make_multi_agent_env(args[3]);
  const int agents = env->spec().num_agents;
  const auto [first, count] = cars_of(index, std::stoi(args[2]), agents);
  const learning::MlpSpec spec{static_cast<int>(env->spec().observation_space.size()), {64}, 2};
  const learning::StackedMlp policies = car_policies(spec, first, count);
  zmq::context_t context;
  zmq::socket_t dealer(context, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::routing_id, "server" + std::to_string(index));
  dealer.set(zmq::sockopt::linger, 2000);
  transport::make_curve_client(dealer, transport::generate_curve_key_pair(), args[4]);
  dealer.connect(transport::nearest_endpoint(args[0]));
  dealer.send(zmq::buffer(raw_header(-2)), zmq::send_flags::none);
  std::vector<std::int64_t> actions(static_cast<std::size_t>(count));
  const std::size_t expected_floats = static_cast<std::size_t>(count) * spec.input_size;
  zmq::message_t header;
  zmq::message_t rows;
  while (true) {
    (void)dealer.recv(header, zmq::recv_flags::none);
    const std::int64_t step = raw_step_of(header);
    if (step < 0) return 0;
    (void)dealer.recv(rows, zmq::recv_flags::none);
    SparseFloats nonzero;
    nonzero.count = rows.size() / 8;
    nonzero.positions = static_cast<const std::uint8_t*>(rows.data());
    nonzero.values = nonzero.positions + nonzero.count * 4;
    if (rows.size() % 8 != 0 ||
        (nonzero.count > 0 && nonzero.position(nonzero.count - 1) >= expected_floats)) {
      std::fprintf(stderr, "bench-marl-worker: %zu bytes that are no sparse rows of %zu floats\n",
                   rows.size(), expected_floats);
      return 1;
    }
    policies.act(nonzero, 0, actions.data());
    dealer.send(zmq::buffer(header.data(), header.size()), zmq::send_flags::sndmore);
    dealer.send(zmq::buffer(actions), zmq::send_flags::none);
  }
}

BenchReport run_marl_bench(const BenchOptions& options) {
  const std::int64_t steps = options.quick ? 1000 : 100000;
  // NAME or NAME-in-process (the three in-process placements alone): marl_workloads.hpp.
  std::string only = options.only.empty() ? "tj10" : options.only;
  if (!is_marl_workload(only)) throw std::invalid_argument(marl_workload_refusal(only));
  const std::string_view suffix = kMarlInProcessSuffix;
  const bool in_process = only.size() > suffix.size() &&
                          std::string_view(only).substr(only.size() - suffix.size()) == suffix;
  if (in_process) only.resize(only.size() - suffix.size());
  shape = only == "tj4" ? MarlShape{"TrafficJunction4-v1", 4, 71.64} : MarlShape{};
  BenchReport report("marl");
  report.add("joint_steps", static_cast<double>(steps), "steps");
  in_process_placements(report, steps, options.quick ? 1 : 3);
  if (!in_process) process_placements(report, steps, options.quick ? 1 : 2);
  // Every ratio is baseline time / subject time (bench/README.md): larger means the subject, the
  // label's first placement, is faster.
  report.add_ratio("actor_one_process/reactor_one_process", "reactor_one_process_seconds",
                   "actor_one_process_seconds");
  report.add_ratio("reactor_one_process/plain_loop", "plain_loop_seconds",
                   "reactor_one_process_seconds");
  if (!in_process) {
    report.add_ratio("actor_inference_2_processes/reactor_inference_2_processes",
                     "reactor_inference_2_processes_seconds",
                     "actor_inference_2_processes_seconds");
    // The goal: 0.8 or more (the federated row against its raw ceiling).
    report.add_ratio("reactor_inference_2_processes/raw_inference_2_processes",
                     "raw_inference_2_processes_seconds", "reactor_inference_2_processes_seconds");
    report.add_ratio("reactor_inference_2_processes/reactor_one_process",
                     "reactor_one_process_seconds", "reactor_inference_2_processes_seconds");
  }
  // Lingua Franca's figure for 100k joint steps, for the speedup (paper/reference_figures.hpp).
  report.add("lingua_franca_paper_100k", shape.paper_seconds, "s");
  if (!options.quick) {
    report.add_ratio("reactor_one_process/lingua_franca_paper", "lingua_franca_paper_100k",
                     "reactor_one_process_seconds");
  }
  return report;
}

}  // namespace tagflow::bench
