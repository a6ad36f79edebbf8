// `tagflow bench federation`: logical tags per second through the coordinator over TCP loopback.
//
// Federations of 2, 4 and 8 federates (threads of this process, each with its own ZeroMQ context
// and sockets, so every control and data message crosses TCP loopback), in a chain and in
// fan-out/fan-in (one source, N-2 workers, one sink). The source has an event every microsecond;
// every federate forwards one 8-byte message per tag to each downstream over connections without
// delay, so every tag needs the coordinator's grant at every hop. The figure is tags / (time from
// the source's first tag to the sink's last), start-up excluded; the source may run ahead, so
// this is pipelined throughput. `cycle_2_federates` is lock-step instead (a loop with one 1 us
// delay): the inverse is the latency of a coordinated 2-federate tag. A raw ZeroMQ DEALER/ROUTER
// round trip over TCP loopback is the ceiling: with a context per end (as processes have) and
// with one shared context (one I/O thread for both ends), measured in rounds alternating with
// the cycle, medians reported. `*_cpu` is the CPU time of the whole process (every federate, the
// coordinator and the ZeroMQ I/O threads) per tag.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <sys/resource.h>
#include <zmq.hpp>

#include "bench/benchmarks.hpp"
#include "coordinator/coordinator.hpp"
#include "coordinator/federate_runtime.hpp"

namespace tagflow::bench {
namespace {

using coordinator::FederationSpec;
using coordinator::WireTag;
using Clock = std::chrono::steady_clock;

constexpr std::int64_t kTagSpacingNs = 1000;

/// Source (`f0`): an event every kTagSpacingNs; others forward each tag's input downstream; the
/// last federate counts. In a cycle, f0 emits once and then forwards what comes back.
class ForwardProgram : public coordinator::FederatedProgram {
 public:
  ForwardProgram(const coordinator::FederateSpec& spec, int tags, bool cycle)
      : spec_(spec), tags_(tags), cycle_(cycle) {}

  WireTag next_local_event() override {
    if (spec_.id != "f0" || emitted_ >= (cycle_ ? 1 : tags_)) return transport::kForever;
    return {emitted_ * kTagSpacingNs, 0};
  }
  void react(const WireTag& tag, const std::vector<coordinator::InputMessage>& inputs,
             coordinator::Outbox& out) override {
    (void)tag;
    const Clock::time_point now = Clock::now();
    if (processed_ == 0) first_ = now;
    last_ = now;
    ++processed_;
    received_ += inputs.size();
    if (spec_.id == "f0" && emitted_ < (cycle_ ? 1 : tags_)) ++emitted_;
    if (cycle_ && spec_.id == "f0" && processed_ > tags_) return;
    for (const std::string& down : spec_.downstreams) out.send(down, 1, "payload!");
  }
  std::vector<std::pair<std::string, std::uint32_t>> input_ports() override {
    std::vector<std::pair<std::string, std::uint32_t>> ports;
    for (const auto& up : spec_.upstreams) ports.emplace_back(up.federate, 1);
    return ports;
  }

  std::int64_t processed_ = 0;
  std::uint64_t received_ = 0;
  Clock::time_point first_;
  Clock::time_point last_;

 private:
  coordinator::FederateSpec spec_;
  int tags_;
  bool cycle_;
  int emitted_ = 0;
};

enum class Shape { kChain, kFanOutIn, kCycle };

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
  spec.validate();
  return spec;
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
  double cpu_us_per_tag = 0;  // CPU of every thread (federates, coordinator, ZeroMQ I/O) per tag
};

/// Tags per second through a federation of `federates`: from the first tag processed anywhere
/// to the last tag processed by the last federate.
FederationRun run_federation(Shape shape, int federates, int tags) {
  const double cpu_before = process_cpu_seconds();
  FederationSpec spec = make_spec(shape, federates);
  coordinator::Coordinator coordinator_process(spec);
  spec.address = coordinator_process.bind("tcp://127.0.0.1:*");
  std::thread coordinator_thread([&] { (void)coordinator_process.run(); });
  std::vector<std::unique_ptr<ForwardProgram>> programs;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (const auto& federate : spec.federates) {
    programs.push_back(std::make_unique<ForwardProgram>(federate, tags, shape == Shape::kCycle));
    threads.emplace_back([&, id = federate.id, program = programs.back().get()] {
      try {
        coordinator::FederateRuntime runtime(spec, id, *program);
        (void)runtime.run();
      } catch (const std::exception&) {
        failures.fetch_add(1);
        coordinator_process.stop();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  coordinator_thread.join();
  const ForwardProgram& sink = *programs.back();
  if (failures.load() != 0 || sink.processed_ != tags) {
    throw std::runtime_error("federation benchmark run failed");
  }
  const double seconds =
      std::chrono::duration<double>(sink.last_ - programs.front()->first_).count();
  const double cpu = process_cpu_seconds() - cpu_before;  // includes joining and start-up
  return {static_cast<double>(tags - 1) / seconds, cpu * 1e6 / tags};
}

/// Microseconds per DEALER -> ROUTER -> DEALER round trip of 16 bytes over TCP loopback. With
/// `shared_context`, both ends share one ZeroMQ context and so one I/O thread; otherwise each end
/// has its own, as two processes (and every federate and the coordinator) do.
double raw_round_trip_us(int round_trips, bool shared_context) {
  zmq::context_t echo_context;
  zmq::context_t own_context;
  zmq::context_t& context = shared_context ? echo_context : own_context;
  zmq::socket_t router(echo_context, zmq::socket_type::router);
  router.bind("tcp://127.0.0.1:*");
  const std::string endpoint = router.get(zmq::sockopt::last_endpoint);
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
  dealer.connect(endpoint);
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
  // varies by 2x from minute to minute.
  const int rounds = options.quick ? 1 : 7;
  std::vector<double> raw;
  std::vector<double> raw_shared;
  std::vector<double> cycle_rate;
  std::vector<double> cycle_cpu;
  for (int round = 0; round < rounds; ++round) {
    raw.push_back(raw_round_trip_us(options.quick ? 500 : 2000, false));
    raw_shared.push_back(raw_round_trip_us(options.quick ? 500 : 2000, true));
    const FederationRun cycle = run_federation(Shape::kCycle, 2, options.quick ? 200 : 1000);
    cycle_rate.push_back(cycle.tags_per_second);
    cycle_cpu.push_back(cycle.cpu_us_per_tag);
  }
  report.add("raw_zmq_round_trip", median(raw), "us");
  report.add("raw_zmq_round_trip_shared_context", median(raw_shared), "us");
  report.add("raw_zmq_round_trips", 1e6 / median(raw), "round trips/s");
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
  report.add_ratio("two_federate_tag/raw_round_trip", "two_federate_tag", "raw_zmq_round_trip");
  report.add_ratio("two_federate_tag/raw_round_trip_shared_context", "two_federate_tag",
                   "raw_zmq_round_trip_shared_context");
  report.add_ratio("chain_8/chain_2", "chain_8_federates", "chain_2_federates");
  report.add_ratio("fan_out_in_8/chain_8", "fan_out_in_8_federates", "chain_8_federates");
  return report;
}

}  // namespace tagflow::bench
