#include "nodes/replay/replay_actor.hpp"

#include <cstdio>
#include <deque>
#include <utility>
#include <vector>

#include "actors/credit_ledger.hpp"
#include "nodes/actor_binding_base.hpp"
#include "nodes/actor_trace.hpp"

namespace tagflow::nodes {
namespace {

using actors::Credit;
using actors::Leave;
using actors::Offer;
using actors::StopRun;

class ReplayActorImpl : public nodes::NodeActorBase<nodes::ReplayActor> {
 public:
  ReplayActorImpl(caf::actor_config& cfg, const ReplayConfig& config, ReplayActorOptions options)
      : NodeActorBase(cfg, options.name, options.report, options.metrics, options.recovery),
        server_(config, options.name),
        options_(std::move(options)) {
    if (options_.max_owed_batches == 0) {
      options_.max_owed_batches = 2 * server_.config().max_batches_per_call;
    }
    restore_from_checkpoint();
  }

  behavior_type make_behavior() override {
    schedule_checkpoint();
    return traced<behavior_type>(
        replica_name(),
        [this](actors::connect_atom, const std::string& port, const std::string& peer_name,
               const caf::actor& peer) { connect(port, peer_name, peer); },
        [this](actors::connect_atom, const std::string& port, const caf::actor& peer) {
          connect(port, "", peer);
        },
        [this](const Offer& offer) {
          auto peer = sender_handle();
          if (!peer || done()) return;
          add_peer(peer, offer.port == "transitions", offer.from);
          count_received(offer);
          send_to(peer, Credit{offer.port, actors::kDefaultCreditWindow, replica_name()});
        },
        [this](const Credit& credit) {
          auto peer = sender_handle();
          if (!peer || done() || !from_peer()) return;
          count_received(credit);
          if (credit.port != "batches") return reject(transport::DropReason::kUnknownPort);
          batches_.add_credit(peer, credit.amount);
          pump();
        },
        [this](const TransitionsMessage& transitions) {
          if (!accept(transitions) || done()) return;
          server_.insert(transitions);
          if (options_.metrics != nullptr)
            options_.metrics->add_replay_inserted(transitions.rows());
          options_.report->count.store(static_cast<std::int64_t>(server_.inserts()),
                                       std::memory_order_relaxed);
          for (;;) {
            std::vector<SampleBatchMessage> due = server_.due_batches();
            if (due.empty()) break;
            for (auto& b : due) {
              if (options_.metrics != nullptr) options_.metrics->add_replay_sampled(b.rows());
              owed_.push_back(std::move(b));
            }
          }
          auto peer = sender_handle();
          if (owed_.size() > options_.max_owed_batches) {
            withheld_.push_back(peer);
          } else {
            send_to(peer, Credit{"transitions", 1, replica_name()});
          }
          if (options_.metrics != nullptr)
            options_.metrics->set_replay_size(server_.size(), server_.stored_bytes());
          pump();
        },
        [this](const PriorityUpdateMessage& update) {
          if (!accept(update) || done()) return;
          server_.update(update);
          if (options_.metrics != nullptr)
            options_.metrics->add_replay_priority_updates(update.keys.size());
          if (auto peer = sender_handle()) send_to(peer, Credit{"priorities", 1, replica_name()});
        },
        [this](const Leave& leave) { on_leave(leave); },
        [this](const StopRun& stop) { on_stop_run(stop); },
        [this](actors::checkpoint_atom) { on_checkpoint(); });
  }

 private:
  // The table, selector and rate limiter (ReplayServer::checkpoint_to, in a file of its own);
  // the minibatches owed to the learner are not kept (sampled again from the restored table).
  std::int64_t save_checkpoint(StateWriter& out, const std::string& table_path) override {
    out.boolean(server_.checkpoint_to(table_path).has_value());
    return static_cast<std::int64_t>(server_.inserts());
  }
  void load_checkpoint(StateReader& in, const std::string& table_path) override {
    if (in.boolean()) server_.restore_from(table_path);
    options_.report->count.store(static_cast<std::int64_t>(server_.inserts()),
                                 std::memory_order_relaxed);
  }
  std::int64_t unanswered_to(const caf::actor_addr& peer) const override {
    return batches_.unanswered(peer);
  }

  // The host links `port` to `peer` (nodes/actor_interfaces.hpp).
  void connect(const std::string& port, const std::string& peer_name, const caf::actor& peer) {
    if (port != "batches") return;
    add_peer(peer, false, peer_name);
    send_to(peer, Offer{port, replica_name()});
  }

  // Owed minibatches to learners with credit (round robin), then held-back sampler credits.
  void pump() {
    bool sent = true;
    while (!owed_.empty() && sent) {
      sent = false;
      for (auto& d : batches_.downstreams()) {
        if (owed_.empty()) break;
        if (d.credits == 0) continue;
        --d.credits;
        send_to(d.handle, std::move(owed_.front()));
        owed_.pop_front();
        sent = true;
      }
    }
    while (!withheld_.empty() && owed_.size() <= options_.max_owed_batches) {
      send_to(withheld_.front(), Credit{"transitions", 1, replica_name()});
      withheld_.pop_front();
    }
  }

  void forget_peer_state(const caf::actor_addr& peer) override {
    batches_.remove(peer);
    for (auto it = withheld_.begin(); it != withheld_.end();) {
      it = it->address() == peer ? withheld_.erase(it) : it + 1;
    }
  }

  void drop_peer_handles() override {
    batches_.downstreams().clear();
    withheld_ = {};
  }

  // At stop, as the reactor binding does: the replica's own checkpoint file.
  void record_results(ReplicaReport& /*report*/) override {
    const std::string error = server_.checkpoint_at_stop();
    if (!error.empty())
      std::fprintf(stderr, "replay %s: %s\n", replica_name().c_str(), error.c_str());
  }

  ReplayServer server_;
  ReplayActorOptions options_;
  actors::CreditLedger batches_{"batches"};
  std::deque<SampleBatchMessage> owed_;  // sampled, waiting for learner credit
  std::deque<caf::actor> withheld_;      // samplers owed one transitions credit
};

}  // namespace

nodes::ReplayActor spawn_replay_actor(caf::actor_system& system, const ReplayConfig& config,
                                      ReplayActorOptions options) {
  return system.spawn<ReplayActorImpl>(config, std::move(options));
}

}  // namespace tagflow::nodes
