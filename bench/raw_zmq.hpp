// The raw ZeroMQ ceilings benchmarks compare against, measured in the same run.
#pragma once

#include <cstddef>
#include <string>

#include <zmq.hpp>

namespace tagflow::bench {

/// Bytes per second of `messages` messages of `size` bytes streamed from a DEALER to a ROUTER in
/// another context, each sent zero-copy from one buffer (the ceiling of a link). The ROUTER binds
/// a loopback TCP port and its Unix-socket twin, and the DEALER connects as a federate would
/// (transport::nearest_endpoint: the twin unless TAGFLOW_LOCAL_LINKS=0), so the stream goes the
/// way a same-host federated link goes.
double raw_zmq_stream_bytes_per_second(int messages, std::size_t size);

/// A ROUTER of `context` bound to a loopback TCP port and that port's Unix-socket twin
/// (transport/WIRE.md §1.1), and the endpoint a DEALER on this host connects to for it: the twin
/// when local links are on, else the TCP endpoint. What the raw ceilings listen and connect on.
/// `unbounded`: no receive high-water mark (set before the binds, which copy the options).
struct LocalRouter {
  explicit LocalRouter(zmq::context_t& context, bool unbounded = false);
  zmq::socket_t socket;
  std::string endpoint;
};

}  // namespace tagflow::bench
