// MultiAgentReactor: the reactor binding of MultiAgentServer.
//
// Ports (configs/README.md): input `actions`; outputs `observations`, `transitions`. Every port
// is a multiport with one channel per linked replica (nodes/cluster/link_plan.hpp); the binding
// is told which policies the replica at the end of each output channel hosts, and sends each
// channel only the agents of those policies (observations) or only those policies' transitions.
//
// Per-tag protocol (logical time only), one joint step per tag, one episode per round:
//   1. The `round` timer fires every round_period: the node sends each `observations` channel
//      its agents' observations and waits.
//   2. `actions` (the servers' answers, one microstep later with `after: 0`): once every agent
//      has its action the env steps and each `transitions` channel gets its policy's rows. If
//      the episode goes on, the same reaction sends the next joint step's observations at once,
//      so the episode's steps follow one another a microstep apart, each one tag (one
//      coordinated tag across processes instead of two). When the episode ended, the next one
//      starts at the next round: logical time advances once per episode, and other nodes'
//      timers fire between episodes.
//      An answer the server refuses (MultiAgentServer::on_actions) is dropped, counted and
//      logged once; the step then waits for a valid one.
//   3. After its step limit (its share of `stop.env_steps`, counted in joint steps) the node plays
//      its final evaluation, then requests the stop.
// A round that finds an episode still running (or waiting) skips its request.
// Thread-safety: one reaction at a time; the progress counters are atomics safe to read from
// any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <limits>
#include <vector>

#include "nodes/channel_digest.hpp"
#include "nodes/encoded_value.hpp"
#include "nodes/episode_returns.hpp"
#include "nodes/messages.hpp"
#include "nodes/multi_agent/multi_agent_metrics.hpp"
#include "nodes/multi_agent/multi_agent_server.hpp"
#include "nodes/node_metrics.hpp"
#include "reactors/reactors.hpp"

namespace tagflow::nodes {

struct MultiAgentPortWidths {
  std::size_t actions = 0;
  /// Per output channel: the policies the replica at its end hosts (ascending).
  std::vector<std::vector<int>> observations;
  std::vector<std::vector<int>> transitions;
};

class MultiAgentReactor : public reactors::Reactor {
 public:
  reactors::InputMultiport<Encoded<AgentActionsMessage>> actions;
  reactors::OutputMultiport<Encoded<AgentObservationsMessage>> observations;
  reactors::OutputMultiport<Encoded<TransitionsMessage>> transitions;

  /// std::invalid_argument when no `observations` channel is linked (nobody would act).
  MultiAgentReactor(std::string name, reactors::Environment& env,
                    const MultiAgentNodeConfig& config, const MultiAgentPortWidths& widths,
                    std::chrono::nanoseconds round_period);

  [[nodiscard]] MultiAgentServer& server() { return server_; }
  [[nodiscard]] const MultiAgentServer& server() const { return server_; }
  /// Plays the final evaluation and requests the stop after `steps` joint steps.
  void set_step_limit(std::int64_t steps) { step_limit_ = steps; }
  [[nodiscard]] bool step_limit_reached() const { return step_limit_reached_; }
  void set_metrics(NodeMetrics* metrics) { metrics_ = metrics; }
  [[nodiscard]] const ChannelDigests& observations_digest() const { return observations_digest_; }
  [[nodiscard]] const ChannelDigests& transitions_digest() const { return transitions_digest_; }
  /// The finished training episodes' team returns, bounded (read after the run).
  [[nodiscard]] const EpisodeReturns& finished_returns() const { return returns_; }
  std::atomic<std::int64_t> env_steps{0};
  std::atomic<double> last_return{0.0};
  /// The team return of the newest greedy evaluation (the progress line's `eval`); NaN: none yet.
  std::atomic<double> last_evaluation{std::numeric_limits<double>::quiet_NaN()};
  std::atomic<std::int64_t> dropped_answers{0};
  /// Wall-clock seconds between consecutive joint steps (read after the run; never feeds back
  /// into the run): the per-step latency a benchmark reports as p50/p99; the newest
  /// kKeptIntervals of them, in no particular order.
  [[nodiscard]] const std::vector<float>& step_intervals() const { return step_intervals_; }

 private:
  void request();
  void on_answers();
  void publish_stats();

  MultiAgentServer server_;
  std::vector<std::vector<int>> observation_policies_, transition_policies_;
  /// Per observations channel: the last message's vectors, filled again once nobody reads it.
  std::vector<EncodedRecycler<AgentObservationsMessage>> observation_storage_;
  reactors::Timer round_;
  ChannelDigests observations_digest_, transitions_digest_;
  EpisodeReturns returns_;
  bool waiting_ = false;
  std::int64_t step_limit_ = -1;
  bool step_limit_reached_ = false;
  NodeMetrics* metrics_ = nullptr;
  MultiAgentMetrics published_;
  /// The wall-clock seconds between joint steps: the newest kKeptIntervals, in a ring.
  static constexpr std::size_t kKeptIntervals = std::size_t{1} << 20;  // 4 MiB
  std::vector<float> step_intervals_;
  std::size_t intervals_seen_ = 0;
  std::chrono::steady_clock::time_point last_step_{};
};

}  // namespace tagflow::nodes
