#include "federate/data_socket.hpp"

#include <set>

#include "transport/curve_keys.hpp"
#include "transport/wire_socket.hpp"

namespace tagflow::coordinator {

std::unique_ptr<transport::ZapAuthenticator> prepare_data_socket(
    zmq::context_t& context, zmq::socket_t& socket, const transport::ValidationPolicy& policy,
    const FederationSpec& spec, const FederateSpec& me) {
  transport::configure_receiver(socket, policy);
  socket.set(zmq::sockopt::linger, 0);
  if (!spec.keys_dir) return nullptr;
  std::set<std::string> allowed;
  for (const UpstreamLink& up : me.upstreams) {
    allowed.insert(transport::read_key_pair(*spec.keys_dir, up.federate, true).public_key);
  }
  auto zap =
      std::make_unique<transport::ZapAuthenticator>(context, std::move(allowed), "the data port");
  transport::make_curve_server(socket, transport::read_key_pair(*spec.keys_dir, me.id));
  return zap;
}

}  // namespace tagflow::coordinator
