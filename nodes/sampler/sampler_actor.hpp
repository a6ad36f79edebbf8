// The actor binding of SamplerServer (actor mode, actors/README.md): the same sampler logic as
// SamplerReactor, driven by messages instead of logical time.
//
// Protocol (actors/control_messages.hpp):
//   - (connect, "transitions" | "observations", peer) from the host: offer that output to the
//     peer (replay / inference); the peer answers with credits. (connect, "weights", learner):
//     subscribe to weights by granting the learner one credit. (connect, "actions", ...) needs
//     nothing: actions are the inference server's replies to this sampler's observations.
//   - A round runs only when every transitions link holds a credit (and, with policy: inference,
//     an observations link holds one): a slow replay stops the sampler instead of filling its
//     mailbox. With policy: inference the sampler sends its observations, waits for the
//     ActionBatch, steps and sends the transitions; with policy: local it steps at once. Between
//     rounds it yields to its mailbox (a step message to itself).
//   - `step_limit` ≥ 0: after that many env steps it stops the run (StopRun "env_steps").
//   - leave_atom (the host, on SIGTERM of a joined sampler): Leave to every peer, then quit.
//   - StopRun: forwarded once to every peer, then quit. A replay or inference peer that goes
//     down also ends this sampler (the cluster it fed is gone).
// Errors: the server's exceptions (bad weights size...) end the actor with an error; the host
// sees it as an abnormal exit. Progress and results go to the shared ReplicaReport.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <caf/actor_system.hpp>

#include "nodes/actor_checkpoint.hpp"
#include "nodes/actor_interfaces.hpp"
#include "nodes/node_metrics.hpp"
#include "nodes/replica_report.hpp"
#include "nodes/sampler/sampler_server.hpp"

namespace tagflow::nodes {

struct SamplerActorOptions {
  std::string name;              // replica name
  std::int64_t step_limit = -1;  // env steps before StopRun "env_steps"; < 0: none
  std::shared_ptr<nodes::ReplicaReport> report;
  NodeMetrics* metrics = nullptr;  // optional: the same families as reactor mode
  ActorRecovery recovery{};        // checkpoints and lost peers (nodes/actor_checkpoint.hpp)
};

[[nodiscard]] nodes::SamplerActor spawn_sampler_actor(caf::actor_system& system,
                                                      const SamplerConfig& config,
                                                      SamplerActorOptions options);

}  // namespace tagflow::nodes
