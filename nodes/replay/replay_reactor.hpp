// ReplayReactor: the reactor binding of ReplayServer.
//
// Ports (configs/README.md): inputs `transitions`, `priorities`; output `batches`. Multiports
// whose width is the number of connected peer replicas; values are Encoded messages
// (encoded_value.hpp). A value on `batches` is the list of minibatches the rate limiter allowed at
// that tag (often empty: then nothing is sent), encoded once as a SampleBatchList.
//
// Per-tag protocol (logical time and counts only):
//   1. `priorities` are applied first (declaration order), so a batch sampled at the same tag
//      sees them.
//   2. `transitions` are inserted channel by channel in channel order, then the due minibatches
//      (count-based rate limit, see replay_server.hpp) are sent on every `batches` channel. With
//      param sample_threads N > 1 the due minibatches are resolved on N threads at once (this
//      reaction's and N − 1 StepWorkers); they hold the same items as with one thread.
// A value the server refuses for its content (std::invalid_argument: an observation width or
// type other than the table's, sizes that disagree) comes from a peer, so it is no programmer
// error: it is dropped before anything is stored, counted (rejected_inputs, and
// tagflow_transport_invalid_messages_total{peer=PORT, reason="rejected_by_node"}) and logged once;
// the run goes on. A reaction must not throw (reactors/reaction.hpp): it would end the process.
// Thread-safety: one reaction at a time (reactor runtime); counters are atomics.
#pragma once

#include <atomic>
#include <memory>
#include <stdexcept>

#include "nodes/channel_digest.hpp"
#include "nodes/encoded_value.hpp"
#include "nodes/node_metrics.hpp"
#include "nodes/replay/replay_server.hpp"
#include "reactors/reactors.hpp"
#include "rl/envs/step_workers.hpp"

namespace tagflow::nodes {

struct ReplayPortWidths {
  std::size_t transitions = 0, priorities = 0, batches = 0;
};

class ReplayReactor : public reactors::Reactor {
 public:
  reactors::InputMultiport<Encoded<TransitionsMessage>> transitions;
  reactors::InputMultiport<Encoded<PriorityUpdateMessage>> priorities;
  reactors::OutputMultiport<Encoded<SampleBatchList>> batches;

  ReplayReactor(std::string name, reactors::Environment& env, const ReplayConfig& config,
                const ReplayPortWidths& widths);

  [[nodiscard]] const ChannelDigests& batches_digest() const { return batches_digest_; }
  std::atomic<std::int64_t> inserts{0};
  std::atomic<std::int64_t> batches_sent{0};
  /// Values dropped because the server refused their content (see above).
  std::atomic<std::int64_t> rejected_inputs{0};

  /// Checkpoints, between tags only: the table (selector, items, generator), the rate limiter's
  /// credits and counters in the server's own checksummed format (replay_server.hpp), streamed
  /// to the attachment "table" of `files`, whose writer seals it (ReplayServer::seal_checkpoint;
  /// no attachment before the first insert), the digest and counters to `out`. load() reads that
  /// file at `table_path` and throws CheckpointError naming it, or StateError, when either does
  /// not fit.
  void save(StateWriter& out, StateAttachments& files);
  void load(StateReader& in, const std::string& table_path);
  /// Updates `metrics` (a replay's NodeMetrics, outliving the run) from now on.
  void set_metrics(NodeMetrics* metrics) { metrics_ = metrics; }

 private:
  void reject(const char* port, const std::invalid_argument& error);

  // With sample_threads > 1; outlives server_, which calls it.
  std::unique_ptr<envs::StepWorkers> workers_;
  ReplayServer server_;
  ChannelDigests batches_digest_;
  NodeMetrics* metrics_ = nullptr;
};

}  // namespace tagflow::nodes
