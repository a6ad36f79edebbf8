// The receiving side of a federate's data plane (transport/WIRE.md §1, §5), shared by every kind
// of federate (FederateRuntime, ReactorFederate).
#pragma once

#include <memory>

#include <zmq.hpp>

#include "federation/federation_spec.hpp"
#include "transport/message_validator.hpp"
#include "transport/zap_authenticator.hpp"

namespace tagflow::coordinator {

/// Prepares `socket` (a ROUTER, not yet bound) to receive `me`'s inputs: the receiver limits of
/// `policy`, no linger, and — when the federation has a key directory — CURVE as server with a
/// ZAP allow-list holding exactly the public keys of `me`'s upstreams. Returns the ZAP handler,
/// which must outlive the socket (nullptr without keys). Throws transport::CurveKeyError when a
/// key file is missing or malformed.
[[nodiscard]] std::unique_ptr<transport::ZapAuthenticator> prepare_data_socket(
    zmq::context_t& context, zmq::socket_t& socket, const transport::ValidationPolicy& policy,
    const FederationSpec& spec, const FederateSpec& me);

}  // namespace tagflow::coordinator
