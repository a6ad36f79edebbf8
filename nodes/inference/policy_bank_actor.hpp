// The actor binding of PolicyBank (actor mode): the same multi-policy inference as
// PolicyBankReactor, driven by messages. Links LibTorch (library tagflow_nodes_actors_torch).
//
// Requesters (multi_agent actors) Offer `observations` and get one credit per request; requests
// are held until every known requester has one waiting (no more can come before they are
// answered), then served together (PolicyBank::serve: batched per policy, same shapes stacked).
// Learners Offer `weights`; each sender's weights load into the policy it trains
// (`weight_policies`: replica name → policy, from the link plan), one credit at a time. A
// refused request is dropped and counted (size_mismatch). Results: ReplicaReport (count = rows
// served, weights_version = the lowest version over its policies, outside_transitions).
//
// Experience (the transitions outside clients logged through the replica's gateway, PROTOCOL.md
// §4.3): the host connects `experience` to each linked replay, which the actor Offers as
// `transitions`; every experience_period (and whenever a replay grants credit) it takes what
// `experience_source` holds and sends each replay its policies' rows, one message per credit.
// Rows wait in the source (bounded there) while a replay has no credit.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <caf/actor_system.hpp>

#include "nodes/actor_checkpoint.hpp"
#include "nodes/actor_interfaces.hpp"
#include "nodes/inference/policy_bank.hpp"
#include "nodes/node_metrics.hpp"
#include "nodes/replica_report.hpp"

namespace tagflow::nodes {

struct PolicyBankActorOptions {
  std::string name;
  std::map<std::string, int> weight_policies;  // learner replica → the policy it trains
  std::shared_ptr<nodes::ReplicaReport> report;
  NodeMetrics* metrics = nullptr;
  /// Called (on the actor's thread) with every weights value it loads: the replica's gateway
  /// (nodes/gateway/) serves them too. Kept, with what it holds, as long as the actor lives.
  std::function<void(int policy, const WeightsMessage&)> weights_listener;
  /// Replica name → the policies it hosts (the replays `experience` reaches are among them).
  std::map<std::string, std::vector<int>> peer_policies;
  /// The logged experience waiting to be sent, by policy; empty function: none.
  std::function<std::vector<std::pair<int, TransitionsMessage>>()> experience_source;
  std::chrono::milliseconds experience_period{20};
  ActorRecovery recovery{};  // lost peers waited for (nodes/actor_checkpoint.hpp)
};

[[nodiscard]] nodes::PolicyBankActor spawn_policy_bank_actor(caf::actor_system& system,
                                                             const PolicyBankConfig& config,
                                                             PolicyBankActorOptions options);

}  // namespace tagflow::nodes
