#include "nodes/single/single_process_cluster.hpp"

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "nodes/inference/inference_reactor.hpp"
#include "nodes/learner/learner_reactor.hpp"
#include "nodes/replay/replay_reactor.hpp"
#include "nodes/sampler/sampler_reactor.hpp"

namespace tagflow::nodes {
namespace {

using cluster::ClusterConfig;
using cluster::ConfigError;
using cluster::NodeConfig;
using cluster::NodeKind;

struct Replica {
  const NodeConfig* group = nullptr;
  int index = 0;
  std::string name;
  std::map<std::string, std::size_t> in_width, out_width;
  SamplerReactor* sampler = nullptr;
  ReplayReactor* replay = nullptr;
  LearnerReactor* learner = nullptr;
  InferenceReactor* inference = nullptr;
};

// One reactor connection: output channel out_ch of (from, from_port) → input channel in_ch of
// (to, to_port), made for connection `conn` of the file.
struct Link {
  std::size_t conn = 0;
  std::size_t from = 0, to = 0;
  std::string from_port, to_port;
  std::size_t out_ch = 0, in_ch = 0;
  std::optional<std::chrono::nanoseconds> after;
};

NodeParams params_of(const NodeConfig& node) {
  return NodeParams(node.name, node.params, node.param_lines);
}

std::vector<Link> plan_links(const ClusterConfig& config, std::vector<Replica>& replicas,
                             const std::map<std::string, std::vector<std::size_t>>& by_group) {
  std::vector<Link> links;
  for (std::size_t c = 0; c < config.connections.size(); ++c) {
    const auto& conn = config.connections[c];
    const auto& from = by_group.at(conn.from_node);
    const auto& to = by_group.at(conn.to_node);
    std::vector<std::pair<std::size_t, std::size_t>> pairs;
    if (from.size() == to.size()) {
      for (std::size_t i = 0; i < from.size(); ++i) pairs.emplace_back(from[i], to[i]);
    } else if (from.size() == 1) {
      for (const std::size_t t : to) pairs.emplace_back(from[0], t);
    } else if (to.size() == 1) {
      for (const std::size_t f : from) pairs.emplace_back(f, to[0]);
    } else {
      throw ConfigError(config.file, conn.line, "connections",
                        "placement single connects equal replica counts or one replica to many; " +
                            conn.from_node + " has " + std::to_string(from.size()) + " and " +
                            conn.to_node + " has " + std::to_string(to.size()));
    }
    for (const auto& [f, t] : pairs) {
      Link link;
      link.conn = c;
      link.from = f;
      link.to = t;
      link.from_port = conn.from_port;
      link.to_port = conn.to_port;
      link.out_ch = replicas[f].out_width[conn.from_port]++;
      link.in_ch = replicas[t].in_width[conn.to_port]++;
      link.after = conn.after;
      links.push_back(link);
    }
  }
  return links;
}

std::size_t width(const std::map<std::string, std::size_t>& widths, const char* port) {
  const auto it = widths.find(port);
  return it == widths.end() ? 0 : it->second;
}

reactors::PortBase& output_port(Replica& r, const std::string& port, std::size_t ch) {
  if (r.sampler != nullptr) {
    if (port == "transitions") return r.sampler->transitions[ch];
    return r.sampler->observations[ch];
  }
  if (r.replay != nullptr) return r.replay->batches[ch];
  if (r.learner != nullptr) {
    if (port == "priorities") return r.learner->priorities[ch];
    return r.learner->weights[ch];
  }
  return r.inference->actions[ch];
}

reactors::PortBase& input_port(Replica& r, const std::string& port, std::size_t ch) {
  if (r.sampler != nullptr) {
    if (port == "actions") return r.sampler->actions[ch];
    return r.sampler->weights[ch];
  }
  if (r.replay != nullptr) {
    if (port == "transitions") return r.replay->transitions[ch];
    return r.replay->priorities[ch];
  }
  if (r.learner != nullptr) return r.learner->batches[ch];
  if (port == "observations") return r.inference->observations[ch];
  return r.inference->weights[ch];
}

std::uint64_t channel_hash(const Replica& r, const std::string& port, std::size_t ch) {
  if (r.sampler != nullptr) {
    return port == "transitions" ? r.sampler->transitions_digest().hash(ch)
                                 : r.sampler->observations_digest().hash(ch);
  }
  if (r.replay != nullptr) return r.replay->batches_digest().hash(ch);
  if (r.learner != nullptr) {
    return port == "priorities" ? r.learner->priorities_digest().hash(ch)
                                : r.learner->weights_digest().hash(ch);
  }
  return r.inference->actions_digest().hash(ch);
}

Bytes u64_bytes(std::uint64_t value) {
  Bytes bytes(8);
  for (int i = 0; i < 8; ++i)
    bytes[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(value >> (8 * i));
  return bytes;
}

// Live progress on stderr (and the `seconds` stop), from its own thread.
class ProgressLine {
 public:
  ProgressLine(std::vector<Replica>& replicas, reactors::Environment& env, bool print,
               std::optional<double> seconds)
      : replicas_(replicas),
        env_(env),
        print_(print),
        seconds_(seconds),
        start_(std::chrono::steady_clock::now()),
        thread_([this] { loop(); }) {}
  ~ProgressLine() { finish(); }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  void finish() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
    if (print_ && printed_) std::fputs("\n", stderr);
  }
  [[nodiscard]] bool timed_out() const { return timed_out_.load(); }

 private:
  void loop() {
    std::int64_t last_steps = 0;
    std::int64_t last_updates = 0;
    auto last = start_;
    std::unique_lock<std::mutex> lock(mutex_);  // guards done_
    while (!wake_.wait_for(lock, std::chrono::milliseconds(250), [this] { return done_; })) {
      const auto now = std::chrono::steady_clock::now();
      const double elapsed = std::chrono::duration<double>(now - start_).count();
      if (seconds_ && elapsed >= *seconds_ && !timed_out_.exchange(true)) env_.request_stop();
      if (!print_) continue;
      std::int64_t steps = 0, updates = 0;
      double recent = 0.0, evaluation = 0.0;
      std::uint64_t version = 0;
      int samplers = 0;
      for (const Replica& r : replicas_) {
        if (r.sampler != nullptr) {
          steps += r.sampler->env_steps.load(std::memory_order_relaxed);
          recent += r.sampler->last_return.load(std::memory_order_relaxed);
          ++samplers;
        }
        if (r.learner != nullptr) {
          updates = r.learner->updates.load(std::memory_order_relaxed);
          evaluation = r.learner->last_evaluation.load(std::memory_order_relaxed);
          version = static_cast<std::uint64_t>(updates);
        }
        if (r.inference != nullptr) version = r.inference->weights_version.load();
      }
      const double dt = std::chrono::duration<double>(now - last).count();
      std::fprintf(stderr,
                   "\r%7.1fs  env steps %9lld (%8.0f/s)  updates %7lld (%6.0f/s)  return %6.1f"
                   "  eval %6.1f  weights v%llu   ",
                   elapsed, static_cast<long long>(steps),
                   static_cast<double>(steps - last_steps) / dt, static_cast<long long>(updates),
                   static_cast<double>(updates - last_updates) / dt,
                   samplers > 0 ? recent / samplers : 0.0, evaluation,
                   static_cast<unsigned long long>(version));
      std::fflush(stderr);
      printed_ = true;
      last_steps = steps;
      last_updates = updates;
      last = now;
    }
  }

  std::vector<Replica>& replicas_;
  reactors::Environment& env_;
  bool print_;
  std::optional<double> seconds_;
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool done_ = false;  // guarded by mutex_
  bool printed_ = false;
  std::atomic<bool> timed_out_{false};
  std::thread thread_;
};

}  // namespace

RunSummary run_single_process_cluster(const ClusterConfig& config,
                                      const SingleProcessOptions& options) {
  // Replicas in file order, and the groups' shared facts (env, network shape).
  std::vector<Replica> replicas;
  std::map<std::string, std::vector<std::size_t>> by_group;
  const NodeConfig* learner_group = nullptr;
  const NodeConfig* sampler_group = nullptr;
  for (const NodeConfig& node : config.nodes) {
    for (int i = 0; i < node.replicas; ++i) {
      by_group[node.name].push_back(replicas.size());
      replicas.push_back(Replica{&node, i, cluster::replica_name(node, i), {}, {}});
    }
    if (node.kind == NodeKind::learner && learner_group == nullptr) learner_group = &node;
    if (node.kind == NodeKind::sampler && sampler_group == nullptr) sampler_group = &node;
  }
  if (sampler_group == nullptr) {
    throw ConfigError(config.file, 0, "nodes", "placement single needs at least one sampler");
  }
  const std::vector<Link> links = plan_links(config, replicas, by_group);

  const std::string env_id = params_of(*sampler_group).get_string("env", "CartPole-v1");
  envs::VectorEnv probe(env_id, envs::VectorEnvOptions{});
  const int observation_size = static_cast<int>(probe.spec().observation_space.size());
  const int num_actions = static_cast<int>(probe.spec().action_space.n);
  const std::string hidden = learner_group != nullptr ? learner_group->params.count("hidden") != 0
                                                            ? learner_group->params.at("hidden")
                                                            : std::string("64,64")
                                                      : std::string("64,64");

  reactors::EnvironmentConfig env_config;
  env_config.workers = std::max(1U, options.workers);
  env_config.start_time_ns = 0;
  env_config.keepalive = true;
  reactors::Environment env(env_config);

  std::size_t sampler_count = 0;
  for (const Replica& r : replicas) sampler_count += r.group->kind == NodeKind::sampler ? 1 : 0;
  std::uint64_t group_salt = 0;
  const NodeConfig* previous_group = nullptr;
  for (Replica& r : replicas) {
    if (r.group != previous_group) ++group_salt;
    previous_group = r.group;
    const std::uint64_t seed =
        config.seed * 1000003ULL + group_salt * 1000ULL + static_cast<std::uint64_t>(r.index);
    NodeParams params = params_of(*r.group);
    switch (r.group->kind) {
      case NodeKind::sampler: {
        if (!params.has("hidden")) params.set("hidden", hidden);
        const SamplerConfig sc =
            SamplerConfig::from_params(params, seed, static_cast<std::uint32_t>(r.index));
        r.sampler = &env.add<SamplerReactor>(
            r.name, sc,
            SamplerPortWidths{width(r.in_width, "actions"), width(r.in_width, "weights"),
                              width(r.out_width, "transitions"),
                              width(r.out_width, "observations")},
            options.round_period);
        if (config.stop.env_steps) {
          const auto share =
              (*config.stop.env_steps + static_cast<std::int64_t>(sampler_count) - 1) /
              static_cast<std::int64_t>(sampler_count);
          r.sampler->set_step_limit(share);
        }
        break;
      }
      case NodeKind::replay:
        r.replay = &env.add<ReplayReactor>(
            r.name, ReplayConfig::from_params(params, seed),
            ReplayPortWidths{width(r.in_width, "transitions"), width(r.in_width, "priorities"),
                             width(r.out_width, "batches")});
        break;
      case NodeKind::learner: {
        const LearnerConfig lc =
            LearnerConfig::from_params(params, config.seed, observation_size, num_actions);
        std::unique_ptr<Evaluator> evaluator;
        if (config.stop.target_return) {
          evaluator = std::make_unique<Evaluator>(env_id, lc.dqn.network.hidden_sizes,
                                                  lc.eval_episodes, config.seed + 424242ULL);
        }
        r.learner = &env.add<LearnerReactor>(
            r.name, lc,
            LearnerPortWidths{width(r.in_width, "batches"), width(r.out_width, "priorities"),
                              width(r.out_width, "weights")},
            std::move(evaluator), config.stop.target_return);
        break;
      }
      case NodeKind::inference: {
        if (!params.has("hidden")) params.set("hidden", hidden);
        r.inference = &env.add<InferenceReactor>(
            r.name,
            InferenceConfig::from_params(params, config.seed, observation_size, num_actions),
            InferencePortWidths{width(r.in_width, "observations"), width(r.in_width, "weights"),
                                width(r.out_width, "actions")});
        break;
      }
    }
  }
  for (const Link& link : links) {
    env.connect(output_port(replicas[link.from], link.from_port, link.out_ch),
                input_port(replicas[link.to], link.to_port, link.in_ch), link.after);
  }

  const auto start = std::chrono::steady_clock::now();
  ProgressLine progress(replicas, env, options.progress, config.stop.seconds);
  env.run();
  progress.finish();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  RunSummary summary;
  summary.mode = cluster::to_string(config.mode);
  summary.seconds = seconds;
  std::uint64_t digest = 14695981039346656037ULL;
  for (const Link& link : links) {
    digest = fnv1a64(u64_bytes(link.conn), digest);
    digest =
        fnv1a64(u64_bytes(channel_hash(replicas[link.from], link.from_port, link.out_ch)), digest);
  }
  LearnerReactor* learner = nullptr;
  for (Replica& r : replicas) {
    NodeThroughput t{r.name, cluster::to_string(r.group->kind), "", 0, 0.0};
    if (r.sampler != nullptr) {
      t.unit = "env_steps";
      t.count = r.sampler->env_steps.load();
      summary.env_steps += t.count;
      summary.episode_returns.push_back(r.sampler->finished_returns());
    } else if (r.replay != nullptr) {
      t.unit = "inserts";
      t.count = r.replay->inserts.load();
    } else if (r.learner != nullptr) {
      t.unit = "updates";
      t.count = r.learner->updates.load();
      if (learner == nullptr) learner = r.learner;
    } else {
      t.unit = "rows";
      t.count = r.inference->rows_served.load();
    }
    t.per_second = seconds > 0 ? static_cast<double>(t.count) / seconds : 0.0;
    summary.nodes.push_back(t);
  }
  if (learner != nullptr) {
    const WeightsMessage final_weights = learner->server().weights();
    digest = fnv1a64(encode(final_weights), digest);
    summary.updates = learner->server().updates();
    summary.weights_version = final_weights.version;
    summary.evaluations = learner->evaluations();
    if (learner->target_reached()) {
      summary.mean_return = summary.evaluations.back();
    } else {
      Evaluator final_evaluation(env_id, learner->server().config().dqn.network.hidden_sizes,
                                 learner->server().config().eval_episodes, config.seed + 424242ULL);
      summary.mean_return = final_evaluation.mean_return(final_weights.values);
    }
    summary.stop_reason = learner->target_reached() ? "target_return" : "";
  }
  if (summary.stop_reason.empty())
    summary.stop_reason = progress.timed_out() ? "seconds" : "env_steps";
  summary.digest = digest;
  return summary;
}

}  // namespace tagflow::nodes
