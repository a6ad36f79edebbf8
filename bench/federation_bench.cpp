// `tagflow bench federation`: logical tags per second through the coordinator, and bytes per
// second through one federated link, with what clusters run: every federate is a reactor program
// under a ReactorFederate, its inputs NetworkReceivers and its outputs NetworkSenders
// (federate/reactor_federate.hpp).
//
// Federations of 2, 4 and 8 federates (threads of this process, each with its own ZeroMQ context
// and sockets, so every control and data message crosses a socket: the Unix-socket twins of their
// loopback ports, transport/WIRE.md §1.1, or TCP loopback with TAGFLOW_LOCAL_LINKS=0), in a chain
// and in fan-out/fan-in (one source, N-2 workers, one sink). The source has an event every
// microsecond; every federate forwards one 8-byte value per tag to each downstream over
// connections without delay, so every tag needs the coordinator's grant at every hop. The figure
// is tags / (time from the source's first tag to the sink's last), start-up excluded; the source
// may run ahead, so this is pipelined throughput. `cycle_2_federates` is lock-step instead (a loop
// with one 1 us delay): the inverse is the latency of a coordinated 2-federate tag;
// `cycle_2_federates_after_0` answers `after 0` instead, the request/reply shape of clusters,
// which the upstreams' COMPLETED notices let run without the coordinator's hop. A raw ZeroMQ
// DEALER/ROUTER round trip over the same transport is the ceiling: with a context per end (as
// processes have) and with one shared context (one I/O thread for both ends); under it, the
// machine's floor, a round trip over a Unix stream socket pair with no ZeroMQ between the ends
// (each end's thread sleeping in poll(2), as a federate's does). All three are measured in rounds
// alternating with the cycle, medians reported. `*_cpu` is the CPU time of the whole process
// (every federate, the coordinator and the ZeroMQ I/O threads) per tag.
// `link_1MiB_federated` is a 2-federate chain whose source sends a 1 MiB value per tag: bytes
// per second from the source's first tag to the sink's last, against `link_1MiB_raw_zmq`, a
// DEALER streaming 1 MiB messages (sent zero-copy) to a ROUTER in another context over the same
// transport, measured in rounds alternating with the link, medians reported.
//
// `tagflow bench coordinator` (run_coordinator_bench, same federations): how far one coordinator
// goes — fan-out/fan-in federations of 2 to 64 federates, tags/s through the coordinator, the
// grants it sent per tag (one grant may cover many pipelined tags) and the CPU time of the
// coordinator's own thread per tag: one coordinator thread saturates near 1e6 / that figure
// tags/s, however many cores the federates have. `fan_out_in_64/fan_out_in_2` is the ratio of
// tags/s.
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <sys/resource.h>
#include <zmq.hpp>

#include "bench/benchmarks.hpp"
#include "bench/raw_zmq.hpp"
#include "bench/timing.hpp"
#include "coordinator/coordinator.hpp"
#include "federate/reactor_federate.hpp"
#include "reactors/reactors.hpp"

namespace tagflow::bench {
namespace {

using coordinator::FederationSpec;
using coordinator::WireTag;
using Clock = std::chrono::steady_clock;

constexpr std::int64_t kTagSpacingNs = 1000;
constexpr std::size_t kSmallValue = 8;
constexpr std::size_t kLinkValue = std::size_t{1} << 20;

/// What NetworkSender and NetworkReceiver carry: shared bytes, one buffer for every tag and
/// downstream.
using Value = transport::Payload;
Value make_value(std::size_t size) { return transport::Payload::owning(std::string(size, 'x')); }
std::size_t size_of(const Value& value) { return value.size; }

/// What one run's federates saw, written by their reactions (each field by one federate).
struct Timeline {
  Clock::time_point first_sent;
  Clock::time_point last_received;
  std::int64_t tags_received = 0;
  std::uint64_t bytes_received = 0;
};

/// The source of a chain or a fan-out: `tags` values, one per kTagSpacingNs.
class Source : public reactors::Reactor {
 public:
  reactors::Output<Value> out{"out", this};
  Source(std::string name, reactors::Environment& env, int tags, std::size_t size,
         Timeline& timeline)
      : reactors::Reactor(std::move(name), env), value_(make_value(size)) {
    reaction("emit").triggers(tick_).effects(out).body([this, tags, &timeline] {
      if (sent_ >= tags) return;
      if (sent_++ == 0) timeline.first_sent = Clock::now();
      out.set(value_);
    });
  }

 private:
  reactors::Timer tick_{"tick", this, reactors::Duration::zero(),
                        std::chrono::nanoseconds(kTagSpacingNs)};
  Value value_;
  int sent_ = 0;
};

/// The first federate of the lock-step cycle: sends at startup and again each time the value
/// comes back, `tags` values in all.
class CycleStart : public reactors::Reactor {
 public:
  reactors::Input<Value> in{"in", this};
  reactors::Output<Value> out{"out", this};
  CycleStart(std::string name, reactors::Environment& env, int tags, Timeline& timeline)
      : reactors::Reactor(std::move(name), env), value_(make_value(kSmallValue)) {
    reaction("emit").triggers(startup(), in).effects(out).body([this, tags, &timeline] {
      if (sent_ >= tags) return;
      if (sent_++ == 0) timeline.first_sent = Clock::now();
      out.set(value_);
    });
  }

 private:
  Value value_;
  int sent_ = 0;
};

/// The last federate: counts the tags at which anything arrived, and the bytes.
class Sink : public reactors::Reactor {
 public:
  reactors::InputMultiport<Value> in;
  Sink(std::string name, reactors::Environment& env, std::size_t width, Timeline& timeline)
      : reactors::Reactor(std::move(name), env), in("in", this, width) {
    reaction("count").triggers(in).body([this, &timeline] {
      for (std::size_t c = 0; c < in.size(); ++c) {
        if (in[c].is_present()) timeline.bytes_received += size_of(in[c].get());
      }
      ++timeline.tags_received;
      timeline.last_received = Clock::now();
    });
  }
};

// kCycle answers `after 1 us`, kCycleMicrostep `after 0` (the next microstep, as clusters answer
// requests): only the second is covered by the upstreams' COMPLETED notices (PROTOCOL.md §3.8).
enum class Shape { kChain, kFanOutIn, kCycle, kCycleMicrostep };

bool is_cycle(Shape shape) { return shape == Shape::kCycle || shape == Shape::kCycleMicrostep; }

FederationSpec make_spec(Shape shape, int federates) {
  const bool chain = shape != Shape::kFanOutIn;
  FederationSpec spec;
  spec.heartbeat_timeout = std::chrono::seconds(10);
  const auto add = [&](const std::string& from, const std::string& to,
                       coordinator::ConnectionDelay delay = std::nullopt) {
    for (auto& f : spec.federates) {
      if (f.id == to) f.upstreams.push_back({from, delay});
      if (f.id == from) f.downstreams.push_back(to);
    }
  };
  for (int i = 0; i < federates; ++i) spec.federates.push_back({"f" + std::to_string(i), {}, {}});
  const std::string sink = "f" + std::to_string(federates - 1);
  for (int i = 1; i < federates; ++i) {
    const std::string id = "f" + std::to_string(i);
    if (chain) {
      add("f" + std::to_string(i - 1), id);
    } else if (id != sink) {
      add("f0", id);
      add(id, sink);
    }
  }
  if (!chain && federates == 2) add("f0", sink);
  if (shape == Shape::kCycle) add(sink, "f0", kTagSpacingNs);
  if (shape == Shape::kCycleMicrostep) add(sink, "f0", 0);
  spec.validate();
  return spec;
}

/// Declares federate `me`'s program: the source (or the cycle's start) in f0, the sink in the
/// last federate, and between them NetworkReceivers wired straight to NetworkSenders.
void declare_program(reactors::Environment& env, coordinator::ReactorFederate& federate,
                     const coordinator::FederateSpec& me, Shape shape, int tags,
                     std::size_t value_size, Timeline& timeline) {
  std::vector<reactors::Output<Value>*> inputs;  // what arrives, as local ports
  for (const coordinator::UpstreamLink& up : me.upstreams) {
    inputs.push_back(
        &env.add<coordinator::NetworkReceiver>("from_" + up.federate, federate, up.federate, 1)
             .out);
  }
  std::vector<reactors::Output<Value>*> outputs;  // what to send to every downstream
  if (me.id == "f0" && is_cycle(shape)) {
    auto& start = env.add<CycleStart>("start", tags, timeline);
    env.connect(*inputs.front(), start.in);
    outputs.push_back(&start.out);
  } else if (me.id == "f0") {
    outputs.push_back(&env.add<Source>("source", tags, value_size, timeline).out);
  } else {
    outputs = inputs;
  }
  const bool last = me.downstreams.empty() || is_cycle(shape);
  if (me.id != "f0" && last) {
    auto& sink = env.add<Sink>("sink", inputs.size(), timeline);
    for (std::size_t i = 0; i < inputs.size(); ++i) env.connect(*inputs[i], sink.in[i]);
  }
  for (const std::string& down : me.downstreams) {
    auto& sender = env.add<coordinator::NetworkSender>("to_" + down, federate, down, 1);
    for (reactors::Output<Value>* output : outputs) env.connect(*output, sender.in);
  }
}

/// CPU time (user + system) this process has used so far, in seconds.
double process_cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

struct FederationRun {
  double tags_per_second = 0;
  double bytes_per_second = 0;
  double cpu_us_per_tag = 0;  // CPU of every thread (federates, coordinator, ZeroMQ I/O) per tag
  double coordinator_cpu_us_per_tag = 0;  // CPU of the coordinator's event loop thread per tag
  double grants_per_tag = 0;              // TAG and PTAG sent, per tag (a grant may cover many)
};

/// Runs a federation of `federates`, each a ReactorFederate on its own thread, until every
/// federate has reached the stop tag (the source's last tag plus a microsecond).
FederationRun run_federation(Shape shape, int federates, int tags,
                             std::size_t value_size = kSmallValue) {
  const double cpu_before = process_cpu_seconds();
  FederationSpec spec = make_spec(shape, federates);
  coordinator::Coordinator coordinator_process(spec);
  spec.address = coordinator_process.bind("tcp://127.0.0.1:*");
  double coordinator_cpu = 0;
  coordinator::CoordinatorResult coordinated;
  std::thread coordinator_thread([&] {
    const double before = thread_cpu_seconds();
    coordinated = coordinator_process.run();
    coordinator_cpu = thread_cpu_seconds() - before;
  });
  // f0 writes first_sent, the sink the rest.
  Timeline timeline;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (const coordinator::FederateSpec& me : spec.federates) {
    threads.emplace_back([&, me] {
      try {
        coordinator::ReactorFederate federate(spec, me.id);
        const WireTag start = federate.join();
        reactors::EnvironmentConfig config;
        config.start_time_ns = start.time_ns();
        config.timeout = std::chrono::nanoseconds(tags * kTagSpacingNs);
        reactors::Environment env(config);
        declare_program(env, federate, me, shape, tags, value_size, timeline);
        federate.run(env);
      } catch (const std::exception& e) {
        // Said here: the coordinator may only see this federate's connections close.
        std::cerr << "federation benchmark: federate '" << me.id << "': " << e.what() << "\n";
        failures.fetch_add(1);
        coordinator_process.stop();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  coordinator_thread.join();
  if (failures.load() != 0 || timeline.tags_received != tags) {
    throw std::runtime_error("federation benchmark run failed");
  }
  const double seconds =
      std::chrono::duration<double>(timeline.last_received - timeline.first_sent).count();
  const double cpu = process_cpu_seconds() - cpu_before;  // includes joining and start-up
  return {static_cast<double>(tags - 1) / seconds,
          static_cast<double>(timeline.bytes_received) / seconds, cpu * 1e6 / tags,
          coordinator_cpu * 1e6 / tags, static_cast<double>(coordinated.grants_sent) / tags};
}

/// Microseconds per DEALER -> ROUTER -> DEALER round trip of 16 bytes, over the transport the
/// federates use (LocalRouter: the Unix-socket twin of a loopback port, unless local links are
/// off). With `shared_context`, both ends share one ZeroMQ context and so one I/O thread;
/// otherwise each end has its own, as two processes (and every federate and the coordinator) do.
double raw_round_trip_us(int round_trips, bool shared_context) {
  zmq::context_t echo_context;
  zmq::context_t own_context;
  zmq::context_t& context = shared_context ? echo_context : own_context;
  LocalRouter local(echo_context);
  zmq::socket_t& router = local.socket;
  std::thread echo([&] {
    zmq::message_t identity;
    zmq::message_t body;
    for (int i = 0; i < round_trips + 1; ++i) {
      (void)router.recv(identity);
      (void)router.recv(body);
      router.send(identity, zmq::send_flags::sndmore);
      router.send(body, zmq::send_flags::none);
    }
  });
  zmq::socket_t dealer(context, zmq::socket_type::dealer);
  dealer.connect(local.endpoint);
  const std::string payload(16, 'x');
  zmq::message_t reply;
  dealer.send(zmq::buffer(payload), zmq::send_flags::none);  // warm-up: connection set-up
  (void)dealer.recv(reply);
  const Clock::time_point start = Clock::now();
  for (int i = 0; i < round_trips; ++i) {
    dealer.send(zmq::buffer(payload), zmq::send_flags::none);
    (void)dealer.recv(reply);
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  echo.join();
  return seconds * 1e6 / round_trips;
}

/// Reads exactly `size` bytes from the blocking socket `fd`, sleeping in poll(2) until they come
/// (as a federate's thread sleeps on its sockets' descriptors). False when the peer is gone.
bool read_exactly(int fd, char* at, std::size_t size) {
  while (size > 0) {
    pollfd readable{fd, POLLIN, 0};
    if (::poll(&readable, 1, -1) < 0 && errno != EINTR) return false;
    const ssize_t n = ::recv(fd, at, size, 0);
    if (n <= 0) {
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      return false;
    }
    at += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

/// Microseconds per round trip of 16 bytes over a Unix stream socket pair between two threads,
/// each sleeping in poll(2) until its bytes come: the machine's floor under a same-host hop (the
/// kernel's copy and one wake-up each way), with no ZeroMQ I/O thread between the two ends.
double raw_socket_round_trip_us(int round_trips) {
  int ends[2] = {-1, -1};
  if (::socketpair(AF_UNIX, SOCK_STREAM, 0, ends) != 0) {
    throw std::runtime_error(std::string("socketpair: ") + std::strerror(errno));
  }
  std::thread echo([&] {
    char body[16];
    for (int i = 0; i < round_trips + 1; ++i) {
      if (!read_exactly(ends[1], body, sizeof body)) break;
      if (::send(ends[1], body, sizeof body, MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof body)) {
        break;
      }
    }
  });
  const std::string payload(16, 'x');
  char reply[16];
  bool ok = true;
  Clock::time_point start = Clock::now();
  for (int i = 0; i < round_trips + 1 && ok; ++i) {
    if (i == 1) start = Clock::now();  // the first one warms both threads up
    ok = ::send(ends[0], payload.data(), payload.size(), MSG_NOSIGNAL) ==
             static_cast<ssize_t>(payload.size()) &&
         read_exactly(ends[0], reply, sizeof reply);
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  ::shutdown(ends[0], SHUT_RDWR);  // ends the echo if a round trip failed
  echo.join();
  ::close(ends[0]);
  ::close(ends[1]);
  if (!ok) throw std::runtime_error("federation benchmark: the Unix socket round trip failed");
  return seconds * 1e6 / round_trips;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

BenchReport run_federation_bench(const BenchOptions& options) {
  const int tags = options.quick ? 500 : 20000;
  BenchReport report("federation");
  // Latency: the raw round trips and the lock-step cycle (f0 -> f1 without delay, f1 -> f0 after
  // 1 us, so no tag can start before the previous one went round the loop: each tag costs two
  // coordinated hops) are measured in alternating rounds, so that each round's figures see the
  // same machine; the medians over the rounds are reported. On a shared VM one run of either
  // varies by 2x from minute to minute. The 1 MiB link and its raw stream alternate the same way.
  const int rounds = options.quick ? 1 : 7;
  const int link_values = options.quick ? 16 : 256;
  std::vector<double> raw;
  std::vector<double> raw_shared;
  std::vector<double> raw_socket;
  std::vector<double> cycle_rate;
  std::vector<double> cycle_cpu;
  std::vector<double> microstep_rate;
  std::vector<double> link_raw;
  std::vector<double> link_federated;
  for (int round = 0; round < rounds; ++round) {
    raw.push_back(raw_round_trip_us(options.quick ? 500 : 2000, false));
    raw_shared.push_back(raw_round_trip_us(options.quick ? 500 : 2000, true));
    raw_socket.push_back(raw_socket_round_trip_us(options.quick ? 500 : 2000));
    const FederationRun cycle = run_federation(Shape::kCycle, 2, options.quick ? 200 : 1000);
    cycle_rate.push_back(cycle.tags_per_second);
    cycle_cpu.push_back(cycle.cpu_us_per_tag);
    microstep_rate.push_back(
        run_federation(Shape::kCycleMicrostep, 2, options.quick ? 200 : 1000).tags_per_second);
    link_raw.push_back(raw_zmq_stream_bytes_per_second(link_values, kLinkValue) * 1e-9);
    link_federated.push_back(
        run_federation(Shape::kChain, 2, link_values, kLinkValue).bytes_per_second * 1e-9);
  }
  report.add("raw_zmq_round_trip", median(raw), "us");
  report.add("raw_zmq_round_trip_shared_context", median(raw_shared), "us");
  report.add("raw_zmq_round_trips", 1e6 / median(raw), "round trips/s");
  report.add("raw_unix_socket_round_trip", median(raw_socket), "us");
  for (const Shape shape : {Shape::kChain, Shape::kFanOutIn}) {
    for (const int n : {2, 4, 8}) {
      const std::string name = std::string(shape == Shape::kChain ? "chain_" : "fan_out_in_") +
                               std::to_string(n) + "_federates";
      const FederationRun run = run_federation(shape, n, tags);
      report.add(name, run.tags_per_second, "tags/s");
      report.add(name + "_cpu", run.cpu_us_per_tag, "us/tag");
    }
  }
  report.add("cycle_2_federates", median(cycle_rate), "tags/s");
  report.add("cycle_2_federates_cpu", median(cycle_cpu), "us/tag");
  report.add("two_federate_tag", 1e6 / report.value("cycle_2_federates"), "us");
  report.add("cycle_2_federates_after_0", median(microstep_rate), "tags/s");
  report.add("two_federate_tag_after_0", 1e6 / report.value("cycle_2_federates_after_0"), "us");
  report.add("link_1MiB_raw_zmq", median(link_raw), "GB/s");
  report.add("link_1MiB_federated", median(link_federated), "GB/s");
  report.add_ratio("two_federate_tag/raw_round_trip", "two_federate_tag", "raw_zmq_round_trip");
  report.add_ratio("two_federate_tag/raw_round_trip_shared_context", "two_federate_tag",
                   "raw_zmq_round_trip_shared_context");
  report.add_ratio("two_federate_tag_after_0/raw_round_trip", "two_federate_tag_after_0",
                   "raw_zmq_round_trip");
  report.add_ratio("raw_zmq_round_trip/raw_unix_socket_round_trip", "raw_zmq_round_trip",
                   "raw_unix_socket_round_trip");
  report.add_ratio("two_federate_tag_after_0/raw_unix_socket_round_trip",
                   "two_federate_tag_after_0", "raw_unix_socket_round_trip");
  report.add_ratio("chain_8/chain_2", "chain_8_federates", "chain_2_federates");
  report.add_ratio("fan_out_in_8/chain_8", "fan_out_in_8_federates", "chain_8_federates");
  report.add_ratio("link_1MiB: federated/raw", "link_1MiB_federated", "link_1MiB_raw_zmq");
  return report;
}

BenchReport run_coordinator_bench(const BenchOptions& options) {
  BenchReport report("coordinator");
  for (const int n : {2, 4, 8, 16, 32, 64}) {
    // Every tag costs a grant per federate: fewer tags for larger federations keep each run to a
    // few seconds on 2 cores.
    const int tags = options.quick ? 50 : std::max(500, 16000 / n);
    const std::string name = "fan_out_in_" + std::to_string(n) + "_federates";
    const FederationRun run = run_federation(Shape::kFanOutIn, n, tags);
    report.add(name, run.tags_per_second, "tags/s");
    report.add(name + "_grants", run.grants_per_tag, "grants/tag");
    report.add(name + "_coordinator_cpu", run.coordinator_cpu_us_per_tag, "us/tag");
  }
  report.add_ratio("fan_out_in_64/fan_out_in_2", "fan_out_in_64_federates",
                   "fan_out_in_2_federates");
  return report;
}

}  // namespace tagflow::bench
