#include "nodes/kind/replica_binding.hpp"

#include <stdexcept>

#include "nodes/channel_digest.hpp"
#include "nodes/kind/node_kind.hpp"

namespace tagflow::nodes {

std::size_t input_width(const ReplicaSetup& s, const char* port) {
  return s.links->input_width(s.config.name, port);
}

std::size_t output_width(const ReplicaSetup& s, const char* port) {
  return s.links->output_width(s.config.name, port);
}

ReplicaResult result_of(const std::string& replica, const NodeKind& kind) {
  ReplicaResult r;
  r.name = replica;
  r.kind = kind.name;
  r.unit = kind.count_unit;
  return r;
}

ReplicaProgress env_progress(const std::atomic<std::int64_t>& env_steps,
                             const std::atomic<double>& last_return) {
  ReplicaProgress p;
  p.env_steps = env_steps.load(std::memory_order_relaxed);
  p.last_return = last_return.load(std::memory_order_relaxed);
  return p;
}

void no_port(const std::string& replica, const std::string& port) {
  throw std::invalid_argument("replica '" + replica + "' has no port '" + port + "'");
}

ReplicaSetup replica_setup(const cluster::ClusterConfig& config, const cluster::LinkPlan& links,
                           const ClusterFacts& facts, const std::string& name) {
  ReplicaSetup setup;
  setup.config = replica_config(config, facts, name);
  setup.links = &links;
  return setup;
}

void ReplicaBinding::save_state(StateWriter& /*out*/, StateAttachments& /*files*/) {
  throw std::logic_error("a " + kind().name + " node cannot be checkpointed");
}

void ReplicaBinding::load_state(StateReader& /*in*/, const std::string& /*file_prefix*/) {
  throw std::logic_error("a " + kind().name + " node cannot be checkpointed");
}

std::unique_ptr<ReplicaBinding> make_replica(const ReplicaSetup& setup,
                                             reactors::Environment& env) {
  const NodeKind& kind = *setup.config.kind;
  if (kind.reactor == nullptr) {
    throw std::invalid_argument(kind.name + " '" + setup.config.name +
                                "' needs LibTorch (run it through tagflow-torch)");
  }
  return kind.reactor(setup, env);
}

std::string stop_reason(const std::vector<std::unique_ptr<ReplicaBinding>>& replicas,
                        bool timed_out) {
  std::vector<std::string> reasons;
  for (const auto& r : replicas) {
    reasons.push_back(r->reached_stop_condition() ? r->kind().own_stop_reason : "");
  }
  return nodes::stop_reason(reasons, timed_out);
}

void append_channels(std::vector<ChannelResult>& out, const std::string& port,
                     const nodes::ChannelDigests& digests, std::optional<reactors::Tag> cutoff) {
  const reactors::Tag limit = cutoff.value_or(reactors::Tag::forever());
  for (std::size_t c = 0; c < digests.size(); ++c) {
    out.push_back({port, c, digests.count_before(c, limit), digests.hash_before(c, limit)});
  }
}

}  // namespace tagflow::nodes
