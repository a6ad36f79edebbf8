// The actor binding of MultiAgentServer (actor mode, actors/README.md): the same multi-agent env
// logic as MultiAgentReactor, driven by messages instead of tags.
//
// Flow control (actors/credit_ledger.hpp): the host links `observations` to each inference server
// and `transitions` to each replay (connect: the actor Offers, the peer grants credit). A joint
// step starts when every transitions link holds credit and every server has granted a request:
// each server gets only the agents of the policies it hosts (`peer_policies`, from the link
// plan); once every agent has its action the env steps and each replay gets its policy's rows.
// Answers the server refuses (MultiAgentServer::on_actions) are dropped and counted
// (size_mismatch). After `step_limit` joint steps the final evaluation is played and the run
// stops (StopRun "env_steps"). Results: ReplicaReport (count = joint steps, returns, collisions,
// the evaluation beside random play, step intervals).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <caf/actor_system.hpp>

#include "nodes/actor_checkpoint.hpp"
#include "nodes/actor_interfaces.hpp"
#include "nodes/multi_agent/multi_agent_server.hpp"
#include "nodes/node_metrics.hpp"
#include "nodes/replica_report.hpp"

namespace tagflow::nodes {

struct MultiAgentActorOptions {
  std::string name;
  std::int64_t step_limit = -1;      // joint steps; < 0: none
  std::size_t transition_links = 0;  // replays to link before the first step
  /// Inference servers to link before the first step: across processes they connect one by one,
  /// and a round must ask every server that hosts an agent's policy.
  std::size_t observation_links = 0;
  /// Replica name → the policies it hosts (every replica of the cluster that hosts any).
  std::map<std::string, std::vector<int>> peer_policies;
  std::shared_ptr<nodes::ReplicaReport> report;
  NodeMetrics* metrics = nullptr;
  ActorRecovery recovery{};  // lost peers waited for (nodes/actor_checkpoint.hpp)
};

[[nodiscard]] nodes::MultiAgentActor spawn_multi_agent_actor(caf::actor_system& system,
                                                             const MultiAgentNodeConfig& config,
                                                             MultiAgentActorOptions options);

}  // namespace tagflow::nodes
