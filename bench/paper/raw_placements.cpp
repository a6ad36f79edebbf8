// The raw ceiling of the federated placement (placements.hpp): the same driver and worker kernels
// in the same processes — the driver in this one, each worker a child process — exchanging the
// same payloads in the same pattern (the driver sends each round's request to every worker, each
// answers, the driver gathers), over plain ZeroMQ with a MessagePack header and no tags, no
// coordinator, no validation and no digests. The transport is the federation's: a Unix-socket twin
// of the driver's TCP endpoint where local links are on (transport/local_links.hpp), TCP loopback
// otherwise.
//
// The driver binds one ROUTER; worker i connects a DEALER with routing id "w<i>". Every message is
// a MessagePack header frame [kind, round] and, for a request or an answer, the payload frame
// (sent without a copy). Kinds: 0 hello (worker -> driver, once), 1 request, 2 answer, 3 stop.
#include <chrono>
#include <cstdio>
#include <memory>
#include <msgpack.hpp>
#include <stdexcept>
#include <string>
#include <tuple>

#include <zmq.hpp>

#include "bench/paper/child_processes.hpp"
#include "bench/paper/placements.hpp"
#include "bench/paper/raw_frames.hpp"
#include "transport/local_links.hpp"
#include "transport/wire_socket.hpp"

namespace tagflow::bench::paper {
namespace {

using transport::Payload;
using Clock = std::chrono::steady_clock;

enum RawKind : int { kHello = 0, kRequest = 1, kAnswer = 2, kStop = 3 };

std::string encode_header(int kind, int round) {
  msgpack::sbuffer buffer;
  msgpack::pack(buffer, std::make_tuple(kind, round));
  return {buffer.data(), buffer.size()};
}

std::tuple<int, int> decode_header(const zmq::message_t& frame) {
  const msgpack::object_handle handle =
      msgpack::unpack(static_cast<const char*>(frame.data()), frame.size());
  return handle.get().as<std::tuple<int, int>>();
}

/// The payload's bytes as the last frame of a message, handed to ZeroMQ without a copy.
void send_payload(zmq::socket_t& socket, const Payload& payload) {
  zmq::message_t frame = transport::frame_of(payload);
  socket.send(frame, zmq::send_flags::none);
}

std::size_t worker_index(const zmq::message_t& identity, std::size_t workers) {
  const std::string id = identity.to_string();
  const std::size_t index = id.size() > 1 && id[0] == 'w' ? std::stoul(id.substr(1)) : workers;
  if (index >= workers) throw std::runtime_error("raw paper bench: unknown worker '" + id + "'");
  return index;
}

}  // namespace

RoundRun run_raw_processes(const RoundWorkload& workload) {
  zmq::context_t context;
  zmq::socket_t router(context, zmq::socket_type::router);
  router.set(zmq::sockopt::sndhwm, 0);
  router.set(zmq::sockopt::rcvhwm, 0);
  router.set(zmq::sockopt::linger, 0);
  router.bind("tcp://127.0.0.1:*");
  const std::string address = router.get(zmq::sockopt::last_endpoint);
  (void)transport::bind_local_twin(router, address);
  ChildProcesses children;
  for (std::size_t i = 0; i < workload.workers; ++i) {
    std::vector<std::string> args{"bench-paper-worker", "--raw", address, "--index",
                                  std::to_string(i)};
    const std::vector<std::string> shape = workload.to_args();
    args.insert(args.end(), shape.begin(), shape.end());
    children.start("w" + std::to_string(i), args);
  }
  std::vector<zmq::message_t> frames;
  std::vector<zmq::message_t> identities(workload.workers);
  std::vector<bool> ready(workload.workers, false);
  for (std::size_t joined = 0; joined < workload.workers;) {
    if (!receive_frames(router, frames, std::chrono::seconds(60))) {
      throw std::runtime_error("raw paper bench: the workers did not say hello within 60 s");
    }
    const std::size_t i = worker_index(frames.at(0), workload.workers);
    if (!ready[i]) ++joined;
    ready[i] = true;
    identities[i].copy(frames[0]);
  }
  RoundDriver driver(workload);
  const auto send_to = [&](std::size_t i, const std::string& header, const Payload* payload) {
    zmq::message_t identity;
    identity.copy(identities[i]);
    router.send(identity, zmq::send_flags::sndmore);
    router.send(zmq::buffer(header),
                payload != nullptr ? zmq::send_flags::sndmore : zmq::send_flags::none);
    if (payload != nullptr) send_payload(router, *payload);
  };
  const auto start = Clock::now();
  for (int round = 0; round < workload.rounds; ++round) {
    const Payload request = driver.next_request();
    const std::string header = encode_header(kRequest, round);
    for (std::size_t i = 0; i < workload.workers; ++i) send_to(i, header, &request);
    for (std::size_t answered = 0; answered < workload.workers; ++answered) {
      if (!receive_frames(router, frames, std::chrono::seconds(60)) || frames.size() != 3) {
        throw std::runtime_error("raw paper bench: an answer of round " + std::to_string(round) +
                                 " is missing or malformed");
      }
      const auto [kind, answered_round] = decode_header(frames[1]);
      if (kind != kAnswer || answered_round != round) {
        throw std::runtime_error("raw paper bench: an answer out of its round");
      }
      std::vector<zmq::message_t> body;
      body.push_back(std::move(frames[2]));
      driver.gather(worker_index(frames[0], workload.workers),
                    transport::adopt_frames(std::move(body)));
    }
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  for (std::size_t i = 0; i < workload.workers; ++i) send_to(i, encode_header(kStop, 0), nullptr);
  children.wait_all(std::chrono::seconds(60));
  return {seconds, driver.answers()};
}

int run_raw_worker_process(const RoundWorkload& workload, const std::string& address,
                           std::size_t index) {
  const std::unique_ptr<RoundWorker> kernel = make_round_worker(workload, index);
  zmq::context_t context;
  zmq::socket_t dealer(context, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::routing_id, "w" + std::to_string(index));
  dealer.set(zmq::sockopt::sndhwm, 0);
  dealer.set(zmq::sockopt::rcvhwm, 0);
  dealer.set(zmq::sockopt::linger, 2000);
  dealer.connect(transport::nearest_endpoint(address));
  dealer.send(zmq::buffer(encode_header(kHello, 0)), zmq::send_flags::none);
  zmq::message_t header;
  while (true) {
    (void)dealer.recv(header, zmq::recv_flags::none);
    const auto [kind, round] = decode_header(header);
    if (kind == kStop) return 0;
    if (kind != kRequest || dealer.get(zmq::sockopt::rcvmore) == 0) {
      std::fprintf(stderr, "raw worker %zu: a message that is no request\n", index);
      return 1;
    }
    std::vector<zmq::message_t> body(1);
    (void)dealer.recv(body[0], zmq::recv_flags::none);
    const Payload answer = kernel->respond(transport::adopt_frames(std::move(body)));
    dealer.send(zmq::buffer(encode_header(kAnswer, round)), zmq::send_flags::sndmore);
    send_payload(dealer, answer);
  }
}

}  // namespace tagflow::bench::paper
