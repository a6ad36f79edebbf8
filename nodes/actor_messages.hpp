// The data messages of the node kinds (nodes/messages.hpp) in actor mode: the `inspect` overload
// CAF 0.17 serializes each with, and their type-ID block.
//
// The block starts where the control block of actors/message_types.hpp ends, so both can be
// registered in one actor system: add_node_message_types() does it for a process that hosts node
// actors (after actors::make_actor_system_config, before the actor_system is built).
// tests/nodes/actor_messages_test.cpp sends every type of both blocks between two actor systems
// over TCP. Adding a data message = one CAF_ADD_TYPE_ID line here + an inspect overload + a case
// in that test. The fields are serialized one by one; the order below is the wire order.
#pragma once

#include <caf/all.hpp>

#include "actors/message_types.hpp"
#include "nodes/messages.hpp"

namespace tagflow::nodes {

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, TransitionsMessage& x) {
  return f(caf::meta::type_name("tagflow.Transitions"), x.observation_size, x.weights_version,
           x.observations, x.actions, x.rewards, x.terminated, x.next_observations,
           x.observation_type, x.observations_u8, x.next_observations_u8);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, SampleBatchMessage& x) {
  return f(caf::meta::type_name("tagflow.SampleBatch"), x.observation_size, x.keys, x.observations,
           x.actions, x.rewards, x.terminated, x.next_observations, x.importance_weights,
           x.weights_versions, x.observation_type, x.observations_u8, x.next_observations_u8);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, PriorityUpdateMessage& x) {
  return f(caf::meta::type_name("tagflow.PriorityUpdate"), x.keys, x.priorities);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, WeightsMessage& x) {
  return f(caf::meta::type_name("tagflow.Weights"), x.version, x.values);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ObservationBatchMessage& x) {
  return f(caf::meta::type_name("tagflow.ObservationBatch"), x.source, x.observation_size,
           x.observations, x.observation_type, x.observations_u8);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ActionBatchMessage& x) {
  return f(caf::meta::type_name("tagflow.ActionBatch"), x.source, x.weights_version, x.actions);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, AgentObservationsMessage& x) {
  return f(caf::meta::type_name("tagflow.AgentObservations"), x.source, x.observation_size,
           x.agents, x.policies, x.observations);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, AgentActionsMessage& x) {
  return f(caf::meta::type_name("tagflow.AgentActions"), x.source, x.agents, x.policies, x.versions,
           x.actions);
}

}  // namespace tagflow::nodes

// clang-format off
CAF_BEGIN_TYPE_ID_BLOCK(tagflow_nodes, caf::id_block::tagflow_control::end)
  CAF_ADD_TYPE_ID(tagflow_nodes, (tagflow::nodes::TransitionsMessage))
  CAF_ADD_TYPE_ID(tagflow_nodes, (tagflow::nodes::SampleBatchMessage))
  CAF_ADD_TYPE_ID(tagflow_nodes, (tagflow::nodes::PriorityUpdateMessage))
  CAF_ADD_TYPE_ID(tagflow_nodes, (tagflow::nodes::WeightsMessage))
  CAF_ADD_TYPE_ID(tagflow_nodes, (tagflow::nodes::ObservationBatchMessage))
  CAF_ADD_TYPE_ID(tagflow_nodes, (tagflow::nodes::ActionBatchMessage))
  CAF_ADD_TYPE_ID(tagflow_nodes, (tagflow::nodes::AgentObservationsMessage))
  CAF_ADD_TYPE_ID(tagflow_nodes, (tagflow::nodes::AgentActionsMessage))
CAF_END_TYPE_ID_BLOCK(tagflow_nodes)
// clang-format on

namespace tagflow::nodes {

/// Number of types in the node block (the loopback test checks it covers every one).
inline constexpr std::size_t kNodeMessageTypeCount =
    caf::id_block::tagflow_nodes::end - caf::id_block::tagflow_nodes::begin;

/// Registers the node block in `config` (the control block is registered already).
inline void add_node_message_types(caf::actor_system_config& config) {
  config.add_message_types<caf::id_block::tagflow_nodes>();
}

}  // namespace tagflow::nodes
