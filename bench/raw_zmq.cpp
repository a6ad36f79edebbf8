#include "bench/raw_zmq.hpp"

#include <chrono>
#include <string>
#include <thread>

#include <zmq.hpp>

#include "transport/local_links.hpp"

namespace tagflow::bench {

LocalRouter::LocalRouter(zmq::context_t& context, bool unbounded)
    : socket(context, zmq::socket_type::router) {
  if (unbounded) socket.set(zmq::sockopt::rcvhwm, 0);
  socket.bind("tcp://127.0.0.1:*");
  const std::string bound = socket.get(zmq::sockopt::last_endpoint);
  (void)transport::bind_local_twin(socket, bound);
  endpoint = transport::nearest_endpoint(bound);
}

double raw_zmq_stream_bytes_per_second(int messages, std::size_t size) {
  zmq::context_t receiver_context;
  zmq::context_t sender_context;
  LocalRouter local(receiver_context, true);
  zmq::socket_t& router = local.socket;
  zmq::socket_t dealer(sender_context, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::sndhwm, 0);
  dealer.connect(local.endpoint);
  const std::string buffer(size, 'x');
  const auto send = [&] {
    zmq::message_t frame(const_cast<char*>(buffer.data()), buffer.size(), nullptr, nullptr);
    dealer.send(frame, zmq::send_flags::none);
  };
  zmq::message_t identity;
  zmq::message_t body;
  send();  // warm-up: connection set-up
  (void)router.recv(identity);
  (void)router.recv(body);
  std::uint64_t bytes = 0;
  const std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  std::thread sender([&] {
    for (int i = 0; i < messages; ++i) send();
  });
  for (int i = 0; i < messages; ++i) {
    (void)router.recv(identity);
    (void)router.recv(body);
    bytes += body.size();
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  sender.join();
  return static_cast<double>(bytes) / seconds;
}

}  // namespace tagflow::bench
