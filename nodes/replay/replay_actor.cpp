#include "nodes/replay/replay_actor.hpp"

#include <deque>
#include <utility>
#include <vector>

#include "actors/credit_ledger.hpp"
#include "actors/peer_set.hpp"

namespace tagflow::nodes {
namespace {

using actors::Credit;
using actors::Leave;
using actors::Offer;
using actors::StopRun;

class ReplayActorImpl : public actors::ReplayActor::base {
 public:
  ReplayActorImpl(caf::actor_config& cfg, const ReplayConfig& config, ReplayActorOptions options)
      : actors::ReplayActor::base(cfg), server_(config), options_(std::move(options)) {
    if (options_.max_owed_batches == 0) {
      options_.max_owed_batches = 2 * server_.config().max_batches_per_call;
    }
    set_down_handler([this](caf::down_msg& down) { on_down(down); });
  }

  behavior_type make_behavior() override {
    return {
        [this](actors::connect_atom, const std::string& port, const caf::actor& peer) {
          if (port != "batches") return;
          peers_.add(peer, false);
          monitor(peer);
          send(actors::as_peer(peer), Offer{port, options_.name});
        },
        [this](const Offer& offer) {
          auto peer = caf::actor_cast<caf::actor>(current_sender());
          if (!peer || done_) return;
          const bool sampler = offer.port == "transitions";
          if (peers_.add(peer, sampler, offer.from)) monitor(peer);
          if (sampler && options_.metrics != nullptr)
            options_.metrics->set_sampler_member(offer.from, true);
          options_.report->peers.store(peers_.samplers(), std::memory_order_relaxed);
          send(actors::as_peer(peer), Credit{offer.port, actors::kDefaultCreditWindow});
        },
        [this](const Credit& credit) {
          auto peer = caf::actor_cast<caf::actor>(current_sender());
          if (!peer || done_ || credit.port != "batches") return;
          batches_.add_credit(peer, credit.amount);
          pump();
        },
        [this](const TransitionsMessage& transitions) {
          if (done_) return;
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
          auto peer = caf::actor_cast<caf::actor>(current_sender());
          if (owed_.size() > options_.max_owed_batches) {
            withheld_.push_back(peer);
          } else {
            send(actors::as_peer(peer), Credit{"transitions", 1});
          }
          if (options_.metrics != nullptr)
            options_.metrics->set_replay_size(server_.size(), server_.stored_bytes());
          pump();
        },
        [this](const PriorityUpdateMessage& update) {
          if (done_) return;
          server_.update(update);
          if (options_.metrics != nullptr)
            options_.metrics->add_replay_priority_updates(update.keys.size());
          if (auto peer = caf::actor_cast<caf::actor>(current_sender()))
            send(actors::as_peer(peer), Credit{"priorities", 1});
        },
        [this](const Leave&) { forget(sender_address()); },
        [this](const StopRun& stop) { stop_run(stop.reason); },
    };
  }

  // Terminated actors that still hold each other's handles would keep each other alive:
  // drop every peer handle on exit.
  void on_exit() override {
    batches_.downstreams().clear();
    peers_ = {};
    withheld_ = {};
  }

 private:
  caf::actor_addr sender_address() {
    return current_sender() ? current_sender()->address() : caf::actor_addr{};
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
        send(actors::as_peer(d.handle), std::move(owed_.front()));
        owed_.pop_front();
        sent = true;
      }
    }
    while (!withheld_.empty() && owed_.size() <= options_.max_owed_batches) {
      send(actors::as_peer(withheld_.front()), Credit{"transitions", 1});
      withheld_.pop_front();
    }
  }

  void forget(const caf::actor_addr& peer) {
    const std::string name = peers_.name_of(peer);
    if (peers_.is_sampler(peer) && !name.empty() && options_.metrics != nullptr)
      options_.metrics->set_sampler_member(name, false);
    peers_.remove(peer);
    batches_.remove(peer);
    demonitor(peer);
    for (auto it = withheld_.begin(); it != withheld_.end();) {
      it = it->address() == peer ? withheld_.erase(it) : it + 1;
    }
    options_.report->peers.store(peers_.samplers(), std::memory_order_relaxed);
  }

  void on_down(const caf::down_msg& down) {
    if (!peers_.contains(down.source)) return;
    const bool sampler = peers_.is_sampler(down.source);
    forget(down.source);
    if (!sampler) stop_run("");  // the learner is gone: nothing consumes the batches
  }

  void stop_run(const std::string& reason) {
    if (done_) return;
    const caf::actor_addr from = sender_address();
    for (const auto& p : peers_.all()) {
      if (p.handle.address() != from) send(actors::as_peer(p.handle), StopRun{reason});
    }
    done_ = true;
    {
      std::lock_guard<std::mutex> lock(options_.report->mutex);
      options_.report->stop_reason = reason;
    }
    options_.report->done.store(true);
    quit();
  }

  ReplayServer server_;
  ReplayActorOptions options_;
  actors::CreditLedger batches_{"batches"};
  actors::PeerSet peers_;
  std::deque<SampleBatchMessage> owed_;  // sampled, waiting for learner credit
  std::deque<caf::actor> withheld_;      // samplers owed one transitions credit
  bool done_ = false;
};

}  // namespace

actors::ReplayActor spawn_replay_actor(caf::actor_system& system, const ReplayConfig& config,
                                       ReplayActorOptions options) {
  return system.spawn<ReplayActorImpl>(config, std::move(options));
}

}  // namespace tagflow::nodes
