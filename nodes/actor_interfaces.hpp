// The typed actor interface of each node kind in actor mode (CAF 0.17 typed actors): which
// messages a node actor accepts, checked at compile time for every send through these handles.
//
// Every node actor accepts the control protocol of actors/control_messages.hpp (Offer, Credit,
// Leave, StopRun) and, from the process that hosts it, (connect_atom, port, peer name, peer):
// "link your `port` to `peer`" (without the name, (connect_atom, port, peer), the peer's traffic is
// counted under peer="unknown") — for an output port the actor offers it to the peer; for an input
// port it subscribes by granting the peer credit (samplers do this for weights, so a sampler that
// joins late asks for weights itself). The data messages are those of nodes/messages.hpp.
// Sampler, replay, learner and inference also take checkpoint_atom from themselves: write a
// checkpoint (nodes/actor_checkpoint.hpp).
//
// Implementations: nodes/<kind>/<kind>_actor.hpp. Handles are cheap to copy and thread-safe.
#pragma once

#include <string>

#include <caf/typed_actor.hpp>

#include "nodes/actor_messages.hpp"

namespace tagflow::nodes {

using NodeActor =
    caf::typed_actor<caf::reacts_to<actors::Offer>, caf::reacts_to<actors::Credit>,
                     caf::reacts_to<actors::Leave>, caf::reacts_to<actors::StopRun>,
                     caf::reacts_to<actors::connect_atom, std::string, std::string, caf::actor>,
                     caf::reacts_to<actors::connect_atom, std::string, caf::actor>>;

/// Steps its envs whenever its transitions links hold credit; asks inference for actions or
/// acts with its local policy copy. leave_atom: leave the cluster (Leave to every peer, quit).
using SamplerActor =
    NodeActor::extend<caf::reacts_to<nodes::ActionBatchMessage>,
                      caf::reacts_to<nodes::WeightsMessage>, caf::reacts_to<actors::step_atom>,
                      caf::reacts_to<actors::leave_atom>, caf::reacts_to<actors::checkpoint_atom>>;

/// Inserts transitions, sends the minibatches its rate limit allows, applies priorities.
using ReplayActor = NodeActor::extend<caf::reacts_to<nodes::TransitionsMessage>,
                                      caf::reacts_to<nodes::PriorityUpdateMessage>,
                                      caf::reacts_to<actors::checkpoint_atom>>;

/// One update per minibatch; priorities back to replay; weights to inference and samplers.
using LearnerActor = NodeActor::extend<caf::reacts_to<nodes::SampleBatchMessage>,
                                       caf::reacts_to<actors::checkpoint_atom>>;

/// Answers observation batches with greedy actions; loads weights.
using InferenceActor =
    NodeActor::extend<caf::reacts_to<nodes::ObservationBatchMessage>,
                      caf::reacts_to<nodes::WeightsMessage>, caf::reacts_to<actors::flush_atom>,
                      caf::reacts_to<actors::checkpoint_atom>>;

/// Steps its multi-agent env whenever its transitions links hold credit: asks each inference
/// server for the actions of its policies' agents, steps once every agent has one.
using MultiAgentActor = NodeActor::extend<caf::reacts_to<nodes::AgentActionsMessage>,
                                          caf::reacts_to<actors::step_atom>>;

/// Answers the agents of the policies it hosts (a multi-agent cluster's inference); loads each
/// policy's weights from its learner.
using PolicyBankActor =
    NodeActor::extend<caf::reacts_to<nodes::AgentObservationsMessage>,
                      caf::reacts_to<nodes::WeightsMessage>, caf::reacts_to<actors::flush_atom>>;

/// Every message any node actor accepts from a peer: the handle through which a node actor
/// sends to a peer whose kind it learns only at run time (an actor that Offered, or granted a
/// Credit). Typed actors may send only to typed handles; the receiver still handles only its own
/// interface, and the protocol sends each peer only what its kind accepts.
using PeerActor = NodeActor::extend<
    caf::reacts_to<nodes::TransitionsMessage>, caf::reacts_to<nodes::SampleBatchMessage>,
    caf::reacts_to<nodes::PriorityUpdateMessage>, caf::reacts_to<nodes::WeightsMessage>,
    caf::reacts_to<nodes::ObservationBatchMessage>, caf::reacts_to<nodes::ActionBatchMessage>,
    caf::reacts_to<nodes::AgentObservationsMessage>, caf::reacts_to<nodes::AgentActionsMessage>>;

/// `peer` as a PeerActor handle.
inline PeerActor as_peer(const caf::actor& peer) { return caf::actor_cast<PeerActor>(peer); }

}  // namespace tagflow::nodes
