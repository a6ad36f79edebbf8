// The replay kind: a replay table (uniform or prioritized, with a rate limiter) that stores the
// samplers' transitions and hands the learner its batches; it can write its table at stop and in
// checkpoints.
#include <memory>

#include "nodes/kind/replica_binding.hpp"
#include "nodes/kind/replica_config.hpp"
#include "nodes/replay/replay_reactor.hpp"

namespace tagflow::nodes {

NodeKind& replay_kind();

namespace replay_kind_parts {

void configure(ReplicaConfig& r, const cluster::ClusterConfig& /*config*/,
               const ClusterFacts& /*facts*/) {
  r.replay = ReplayConfig::from_params(r.params, r.seed);
  r.checkpoint_path = replay_checkpoint_path(r.replay->checkpoint_dir, r.name);
}

class ReplayBinding : public ReplicaBinding {
 public:
  ReplayBinding(const ReplicaSetup& s, reactors::Environment& env) {
    reactor_ = &env.add<ReplayReactor>(
        s.config.name, *s.config.replay,
        ReplayPortWidths{input_width(s, "transitions"), input_width(s, "priorities"),
                         output_width(s, "batches")});
    reactor_->set_metrics(s.metrics);
  }
  const NodeKind& kind() const override { return replay_kind(); }
  reactors::PortBase& output(const std::string& port, std::size_t ch) override {
    if (port == "batches") return reactor_->batches[ch];
    no_port(reactor_->name(), port);
  }
  reactors::PortBase& input(const std::string& port, std::size_t ch) override {
    if (port == "transitions") return reactor_->transitions[ch];
    if (port == "priorities") return reactor_->priorities[ch];
    no_port(reactor_->name(), port);
  }
  ReplicaProgress progress() const override { return {}; }
  ReplicaResult result(std::optional<reactors::Tag> cutoff) override {
    ReplicaResult r = result_of(reactor_->name(), kind());
    r.count = reactor_->inserts.load();
    append_channels(r.channels, "batches", reactor_->batches_digest(), cutoff);
    return r;
  }
  bool reached_stop_condition() const override { return false; }
  void save_state(StateWriter& out, StateAttachments& files) override {
    reactor_->save(out, files);
  }
  void load_state(StateReader& in, const std::string& file_prefix) override {
    reactor_->load(in, file_prefix + ".table");
  }

 private:
  ReplayReactor* reactor_ = nullptr;
};

std::unique_ptr<ReplicaBinding> make_reactor(const ReplicaSetup& s, reactors::Environment& env) {
  return std::make_unique<ReplayBinding>(s, env);
}

NodeKind make_kind() {
  NodeKind k;
  k.name = "replay";
  k.inputs = {needed_input("transitions"), "priorities"};
  k.outputs = {"batches"};
  k.count_unit = "inserts";
  k.count_family = family::kReplayInserted;
  k.hosts_policies = true;
  k.metrics = node_families({family::kReplayInserted, family::kReplaySampled,
                             family::kReplayPriorityUpdates, family::kReplayTransitions,
                             family::kReplayBytes});
  k.configure = configure;
  k.reactor = make_reactor;
  return k;
}

}  // namespace replay_kind_parts

NodeKind& replay_kind() {
  static NodeKind kind = replay_kind_parts::make_kind();
  return kind;
}

}  // namespace tagflow::nodes
