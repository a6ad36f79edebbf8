// A GatewayBackend for gateway tests without LibTorch: 4 agents of 3 floats, 2 actions; policy p0
// serves agents 0 and 1, p1 agent 2 (both hosted), p2 agent 3 (hosted by "other-0"). The action of
// an observation is 1 when its sum is positive; the version is the last weights version loaded.
// hold(true) makes serve() wait until hold(false): requests pile up behind it. fail makes every
// pass throw; fail_on_13 a pass that holds an observation value of 13.
#pragma once

#include <atomic>
#include <chrono>
#include <thread>

#include "nodes/gateway/gateway_backend.hpp"

namespace tagflow::gateway::testing {

class FakeBackend : public GatewayBackend {
 public:
  struct Shared {
    std::atomic<bool> hold{false};
    std::atomic<bool> fail{false};
    std::atomic<bool> fail_on_13{false};
    std::atomic<std::uint64_t> passes{0};
  };

  explicit FakeBackend(std::shared_ptr<Shared> shared = std::make_shared<Shared>())
      : shared_(std::move(shared)) {
    model_.server = "inference-0";
    model_.env = "Fake-v0";
    model_.num_agents = 4;
    model_.observation_size = 3;
    model_.num_actions = 2;
    model_.time_input = true;  // the third float is the client's elapsed fraction
    model_.max_episode_steps = 50;
    model_.policy_names = {"p0", "p1", "p2"};
    model_.agent_policy = {0, 0, 1, 2};
    model_.policy_server = {"inference-0", "inference-0", "other-0"};
    model_.hosted = {0, 1};
  }
  const GatewayModel& model() const override { return model_; }
  std::vector<nodes::AgentActionsMessage> serve(
      const std::vector<nodes::AgentObservationsMessage>& requests) override {
    while (shared_->hold.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    shared_->passes.fetch_add(1);
    if (shared_->fail.load()) throw std::runtime_error("the fake policy failed");
    if (shared_->fail_on_13.load()) {
      for (const auto& r : requests) {
        for (const float x : r.observations) {
          if (x == 13.0F) throw std::runtime_error("the fake policy failed on 13");
        }
      }
    }
    std::vector<nodes::AgentActionsMessage> out;
    for (const auto& r : requests) {
      nodes::AgentActionsMessage a;
      a.agents = r.agents;
      a.policies = r.policies;
      for (std::size_t j = 0; j < r.rows(); ++j) {
        float sum = 0;
        for (std::size_t k = 0; k < 3; ++k) sum += r.observations[j * 3 + k];
        a.actions.push_back(sum > 0 ? 1 : 0);
        a.versions.push_back(versions_[r.policies[j]]);
      }
      out.push_back(std::move(a));
    }
    return out;
  }
  void load_weights(int policy, const nodes::WeightsMessage& weights) override {
    if (weights.version > versions_[static_cast<std::size_t>(policy)]) {
      versions_[static_cast<std::size_t>(policy)] = weights.version;
    }
  }
  std::uint64_t version(int policy) const override {
    return versions_[static_cast<std::size_t>(policy)];
  }

 private:
  std::shared_ptr<Shared> shared_;
  GatewayModel model_;
  std::uint64_t versions_[3] = {0, 0, 0};
};

}  // namespace tagflow::gateway::testing
