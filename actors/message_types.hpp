// Every message type that crosses a process in actor mode, in ONE type-ID block, and the
// `inspect` overload CAF 0.17 serializes each with.
//
// CAF sends a message to a remote actor only if both actor systems know its type by name: a
// type that is not registered works between local actors and fails only over the network
// ("type was not added to the types list"). The block below is the single list; registering it
// is one call, `add_message_types<caf::id_block::tagflow>()` (actors/actor_system_setup.cpp),
// and tests/actors/message_types_test.cpp sends every type in it between two actor systems over
// TCP. Adding a message type = one CAF_ADD_TYPE_ID line here + an inspect overload + a case in
// that test.
//
// The data messages (nodes/messages.hpp) are serialized field by field; the field order below
// is the wire order. Atoms (step, flush, connect, leave) need no registration in CAF 0.17.
#pragma once

#include <caf/all.hpp>

#include "actors/control_messages.hpp"
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

}  // namespace tagflow::nodes

// clang-format off
CAF_BEGIN_TYPE_ID_BLOCK(tagflow, caf::first_custom_type_id)
  CAF_ADD_TYPE_ID(tagflow, (tagflow::nodes::TransitionsMessage))
  CAF_ADD_TYPE_ID(tagflow, (tagflow::nodes::SampleBatchMessage))
  CAF_ADD_TYPE_ID(tagflow, (tagflow::nodes::PriorityUpdateMessage))
  CAF_ADD_TYPE_ID(tagflow, (tagflow::nodes::WeightsMessage))
  CAF_ADD_TYPE_ID(tagflow, (tagflow::nodes::ObservationBatchMessage))
  CAF_ADD_TYPE_ID(tagflow, (tagflow::nodes::ActionBatchMessage))
  CAF_ADD_TYPE_ID(tagflow, (tagflow::actors::Offer))
  CAF_ADD_TYPE_ID(tagflow, (tagflow::actors::Credit))
  CAF_ADD_TYPE_ID(tagflow, (tagflow::actors::Leave))
  CAF_ADD_TYPE_ID(tagflow, (tagflow::actors::StopRun))
CAF_END_TYPE_ID_BLOCK(tagflow)
// clang-format on

namespace tagflow::actors {

/// Number of types in the block (the loopback test checks it covers every one).
inline constexpr std::size_t kMessageTypeCount =
    caf::id_block::tagflow::end - caf::id_block::tagflow::begin;

// Atoms: local signals (no registration needed in CAF 0.17; at most 10 characters).
using step_atom = caf::atom_constant<caf::atom("step")>;        // a sampler's next round
using flush_atom = caf::atom_constant<caf::atom("flush")>;      // inference: serve what waits
using connect_atom = caf::atom_constant<caf::atom("connect")>;  // host: link a port to a peer
using leave_atom = caf::atom_constant<caf::atom("leave")>;      // host: this replica leaves

}  // namespace tagflow::actors
