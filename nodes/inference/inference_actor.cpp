#include "nodes/inference/inference_actor.hpp"

#include <algorithm>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "nodes/actor_binding_base.hpp"
#include "nodes/actor_trace.hpp"

namespace tagflow::nodes {
namespace {

using actors::Credit;
using actors::Leave;
using actors::Offer;
using actors::StopRun;

class InferenceActorImpl : public nodes::NodeActorBase<nodes::InferenceActor> {
 public:
  InferenceActorImpl(caf::actor_config& cfg, const InferenceConfig& config,
                     InferenceActorOptions options)
      : NodeActorBase(cfg, options.name, options.report, options.metrics, options.recovery),
        server_(config),
        options_(std::move(options)) {
    restore_from_checkpoint();
  }

  behavior_type make_behavior() override {
    schedule_checkpoint();
    return traced<behavior_type>(
        replica_name(),
        [](actors::connect_atom, const std::string&, const std::string&, const caf::actor&) {},
        [](actors::connect_atom, const std::string&, const caf::actor&) {},
        [this](const Offer& offer) {
          auto peer = sender_handle();
          if (!peer || done()) return;
          add_peer(peer, offer.port == "observations", offer.from);
          count_received(offer);
          if (offer.port == "weights") server_.on_new_weights_source();
          send_to(peer, Credit{offer.port, 1, replica_name()});
        },
        [this](const Credit&) { reject(transport::DropReason::kUnknownKind); },
        [this](const WeightsMessage& weights) {
          if (!accept(weights) || done()) return;
          server_.on_weights(weights);
          latest_weights_ = weights;
          options_.report->weights_version.store(server_.weights_version(),
                                                 std::memory_order_relaxed);
          if (options_.metrics != nullptr)
            options_.metrics->set_weights_version(server_.weights_version());
          if (auto peer = sender_handle()) send_to(peer, Credit{"weights", 1, replica_name()});
        },
        [this](const ObservationBatchMessage& request) {
          auto peer = sender_handle();
          if (!peer || !accept(request) || done()) return;
          try {
            server_.enqueue(request, now());
          } catch (const std::invalid_argument&) {  // another env's width: refuse, count
            reject(transport::DropReason::kSizeMismatch);
            return;
          }
          requesters_.push_back(peer);
          serve_when_due();
        },
        [this](actors::flush_atom) {
          flush_pending_ = false;
          serve_when_due();
        },
        [this](const Leave& leave) { on_leave(leave); },
        [this](const StopRun& stop) { on_stop_run(stop); },
        [this](actors::checkpoint_atom) { on_checkpoint(); });
  }

 private:
  static std::chrono::nanoseconds now() {
    return std::chrono::steady_clock::now().time_since_epoch();
  }

  // The held batch (InferenceServer::enqueue) is served once the server says it is due —
  // max_batch rows, or max_wait since the oldest request — or once every known sampler has a
  // request waiting (no more can come before it is answered); otherwise a flush is scheduled
  // for the deadline.
  void serve_when_due() {
    if (server_.queued_requests() == 0 || done()) return;
    const bool everyone_waits =
        static_cast<long>(server_.queued_requests()) >= peers().transients();
    if (server_.batch_due(now()) || everyone_waits) {
      serve();
    } else if (!flush_pending_) {
      flush_pending_ = true;
      const auto wait = std::max(std::chrono::nanoseconds(0), *server_.deadline() - now());
      delayed_send(this, wait, actors::flush_atom::value);
    }
  }

  void serve() {
    if (server_.queued_requests() == 0 || done()) return;
    const std::size_t rows = server_.queued_rows();
    const auto started = std::chrono::steady_clock::now();
    std::vector<ActionBatchMessage> answers = server_.serve_queued();
    if (options_.metrics != nullptr) {
      options_.metrics->add_inference_batch(
          rows, std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    }
    // Counted before the answers go out: whoever holds an answer sees its rows counted.
    options_.report->count.store(rows_before_ + static_cast<std::int64_t>(server_.rows_served()),
                                 std::memory_order_relaxed);
    for (std::size_t i = 0; i < answers.size(); ++i) {
      send_to(requesters_[i], std::move(answers[i]));
      send_to(requesters_[i], Credit{"observations", 1, replica_name()});
    }
    requesters_.clear();
  }

  void forget_peer_state(const caf::actor_addr& peer) override {
    server_.drop_queued_if([&](std::size_t i) { return requesters_[i].address() == peer; });
    requesters_.erase(std::remove_if(requesters_.begin(), requesters_.end(),
                                     [&](const caf::actor& r) { return r.address() == peer; }),
                      requesters_.end());
    // The samplers still here may all be waiting already.
    serve_when_due();
  }

  void drop_peer_handles() override { requesters_ = {}; }

  // The weights it serves with and its rows served; held requests are not kept (their samplers
  // ask again).
  std::int64_t save_checkpoint(StateWriter& out, const std::string& /*table_path*/) override {
    out.boolean(latest_weights_.has_value());
    if (latest_weights_) {
      out.u64(latest_weights_->version);
      out.pod_vector(latest_weights_->values);
    }
    const std::int64_t rows = rows_before_ + static_cast<std::int64_t>(server_.rows_served());
    out.i64(rows);
    return rows;
  }
  void load_checkpoint(StateReader& in, const std::string& /*table_path*/) override {
    if (in.boolean()) {
      WeightsMessage weights;
      weights.version = in.u64();
      weights.values = in.pod_vector<float>();
      server_.on_weights(weights);
      latest_weights_ = std::move(weights);
      options_.report->weights_version.store(server_.weights_version(), std::memory_order_relaxed);
    }
    rows_before_ = in.i64();
    options_.report->count.store(rows_before_, std::memory_order_relaxed);
  }

  InferenceServer server_;  // holds the requests (enqueue/batch_due/deadline/serve_queued)
  InferenceActorOptions options_;
  std::vector<caf::actor> requesters_;            // of the held requests, in the same order
  std::optional<WeightsMessage> latest_weights_;  // the last loaded (for checkpoints)
  std::int64_t rows_before_ = 0;                  // rows served before a restore
  bool flush_pending_ = false;
};

}  // namespace

nodes::InferenceActor spawn_inference_actor(caf::actor_system& system,
                                            const InferenceConfig& config,
                                            InferenceActorOptions options) {
  return system.spawn<InferenceActorImpl>(config, std::move(options));
}

}  // namespace tagflow::nodes
