// The control messages of actor mode in ONE type-ID block, and the atoms of local signals.
//
// CAF sends a message to a remote actor only if both actor systems know its type by name: a
// type that is not registered works between local actors and fails only over the network
// ("type was not added to the types list"). This block holds the control protocol of
// actors/control_messages.hpp; the data messages of the node kinds have their own block, which
// starts where this one ends (nodes/actor_messages.hpp). make_actor_system_config() registers
// this block (actors/actor_system_setup.cpp); the process that hosts node actors adds the node
// block (nodes::add_node_message_types). tests/nodes/actor_messages_test.cpp sends every type of
// both blocks between two actor systems over TCP. Adding a control message = one CAF_ADD_TYPE_ID
// line here + an inspect overload + a case in that test.
// Atoms (step, flush, connect, leave) need no registration in CAF 0.17.
#pragma once

#include <caf/all.hpp>

#include "actors/control_messages.hpp"

// clang-format off
CAF_BEGIN_TYPE_ID_BLOCK(tagflow_control, caf::first_custom_type_id)
  CAF_ADD_TYPE_ID(tagflow_control, (tagflow::actors::Offer))
  CAF_ADD_TYPE_ID(tagflow_control, (tagflow::actors::Credit))
  CAF_ADD_TYPE_ID(tagflow_control, (tagflow::actors::Leave))
  CAF_ADD_TYPE_ID(tagflow_control, (tagflow::actors::StopRun))
CAF_END_TYPE_ID_BLOCK(tagflow_control)
// clang-format on

namespace tagflow::actors {

/// Number of types in the control block (the loopback test checks it covers every one).
inline constexpr std::size_t kControlMessageTypeCount =
    caf::id_block::tagflow_control::end - caf::id_block::tagflow_control::begin;

// Atoms: local signals (no registration needed in CAF 0.17; at most 10 characters).
using step_atom = caf::atom_constant<caf::atom("step")>;        // a sampler's next round
using flush_atom = caf::atom_constant<caf::atom("flush")>;      // inference: serve what waits
using connect_atom = caf::atom_constant<caf::atom("connect")>;  // host: link a port to a peer
using leave_atom = caf::atom_constant<caf::atom("leave")>;      // host: this replica leaves
using checkpoint_atom = caf::atom_constant<caf::atom("ckpt")>;  // a node: write your checkpoint

}  // namespace tagflow::actors
