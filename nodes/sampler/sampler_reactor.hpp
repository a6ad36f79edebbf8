// SamplerReactor: the reactor binding of SamplerServer.
//
// Ports (configs/README.md): inputs `actions`, `weights`; outputs `transitions`, `observations`.
// Every port is a multiport whose width is the number of connected peer replicas (0 when the
// cluster file does not connect it); values are Encoded messages (nodes/encoded_value.hpp),
// encoded once per tag here.
//
// Per-tag protocol (logical time only):
//   1. The `round` timer fires every round_period. With policy: inference, the sampler sends
//      its current observations on every `observations` channel and waits; with policy: local,
//      it acts with its local policy copy and sends the transitions at once.
//   2. `actions` (the inference server's answer, one microstep later with `after: 0`) steps the
//      envs with those greedy actions (ε-greedy on top) and sends the transitions on every
//      `transitions` channel at that tag.
//   3. `weights` load into the local policy copy before anything else at their tag.
// A round that is still waiting for actions skips its observations (no second request).
// Thread-safety: the reactor runtime calls one reaction of a reactor at a time; the progress
// counters are atomics safe to read from any thread.
#pragma once

#include <atomic>
#include <chrono>

#include "nodes/channel_digest.hpp"
#include "nodes/encoded_value.hpp"
#include "nodes/episode_returns.hpp"
#include "nodes/messages.hpp"
#include "nodes/node_metrics.hpp"
#include "nodes/sampler/sampler_server.hpp"
#include "reactors/reactors.hpp"

namespace tagflow::nodes {

struct SamplerPortWidths {
  std::size_t actions = 0, weights = 0, transitions = 0, observations = 0;
};

class SamplerReactor : public reactors::Reactor {
 public:
  reactors::InputMultiport<Encoded<ActionBatchMessage>> actions;
  reactors::InputMultiport<Encoded<WeightsMessage>> weights;
  reactors::OutputMultiport<Encoded<TransitionsMessage>> transitions;
  reactors::OutputMultiport<Encoded<ObservationBatchMessage>> observations;

  SamplerReactor(std::string name, reactors::Environment& env, const SamplerConfig& config,
                 const SamplerPortWidths& widths, std::chrono::nanoseconds round_period);

  [[nodiscard]] SamplerServer& server() { return server_; }
  /// Requests the stop once this sampler has made `steps` env steps (the `env_steps` stop).
  void set_step_limit(std::int64_t steps) { step_limit_ = steps; }
  /// True once the step limit was reached (and the stop requested).
  [[nodiscard]] bool step_limit_reached() const { return step_limit_reached_; }
  /// Updates `metrics` (a sampler's NodeMetrics, outliving the run) from now on.
  void set_metrics(NodeMetrics* metrics) { metrics_ = metrics; }
  [[nodiscard]] const ChannelDigests& transitions_digest() const { return transitions_digest_; }
  [[nodiscard]] const ChannelDigests& observations_digest() const { return observations_digest_; }
  /// Env steps so far and the sum/count of finished episode returns (read from any thread).
  std::atomic<std::int64_t> env_steps{0};
  std::atomic<std::int64_t> episodes{0};
  std::atomic<double> last_return{0.0};
  /// The finished episodes' returns, bounded (read after the run).
  [[nodiscard]] const EpisodeReturns& finished_returns() const { return returns_; }
  /// Checkpoints, between tags only: the server, the digests, the returns and the round's state.
  void save(StateWriter& out) const;
  void load(StateReader& in);

 private:
  void send_transitions(TransitionsMessage message);
  void publish_stats();

  SamplerServer server_;
  reactors::Timer round_;
  ChannelDigests transitions_digest_;
  ChannelDigests observations_digest_;
  EpisodeReturns returns_;
  bool waiting_ = false;
  std::int64_t step_limit_ = -1;
  bool step_limit_reached_ = false;
  NodeMetrics* metrics_ = nullptr;
  std::int64_t steps_reported_ = 0;
};

}  // namespace tagflow::nodes
