// `tagflow bench reactors`: the reactor runtime against idiomatic CAF 0.17 event-based actors.
//
// - pingpong: one round trip per tag (Ping: logical action -> send; Pong: echo; Ping: receive ->
//   schedule the next serve), 1 M round trips; CAF: a pong actor returning what it receives.
// - broadcast_gather_N: a server sends a value to N workers, each answers, the server gathers all
//   N answers and starts the next round; 100 k rounds. Reactor: one output broadcast to a bank,
//   answers through a multiport, one tag per round. CAF: the server sends to each worker, which
//   returns its answer to the sender; the server counts answers.
// - broadcast_gather_10MB_N: the same, the value being a 10 MiB array of doubles built once and
//   shared: a Shared<std::vector<double>> in reactor mode; in CAF one caf::message holding the
//   vector, sent to every worker (copy-on-write: read by const reference, never copied). Each
//   worker reads one element, so the figures measure messaging, not memory bandwidth.
// Reactor figures use 1 worker (single-thread mode) and 2 workers (this machine's cores); CAF
// uses its default scheduler (one thread per core). Ratios are throughput reactor / CAF.
#include <chrono>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "bench/benchmarks.hpp"
#include "bench/timing.hpp"
#include "reactors/reactors.hpp"

namespace tagflow::bench {
namespace {

namespace rx = tagflow::reactors;
using Clock = std::chrono::steady_clock;
using Array = std::vector<double>;

constexpr std::size_t kArrayElements = (10U << 20U) / sizeof(double);  // 10 MiB
constexpr std::size_t kStride = 4099;

// ---------------------------------------------------------------- reactor mode

class Ping : public rx::Reactor {
 public:
  rx::Input<int> in{"in", this};
  rx::Output<int> out{"out", this};
  rx::LogicalAction<> serve{"serve", this};

  Ping(std::string name, rx::Environment& env, int round_trips)
      : Reactor(std::move(name), env), limit_(round_trips) {
    reaction("serve").triggers(startup(), serve).effects(out).body([this] { out.set(count_); });
    reaction("receive").triggers(in).effects(serve).body([this] {
      if (++count_ < limit_) {
        serve.schedule();
      } else {
        request_stop();
      }
    });
  }
  [[nodiscard]] int count() const { return count_; }

 private:
  int limit_;
  int count_ = 0;
};

class Pong : public rx::Reactor {
 public:
  rx::Input<int> in{"in", this};
  rx::Output<int> out{"out", this};
  Pong(std::string name, rx::Environment& env) : Reactor(std::move(name), env) {
    reaction("echo").triggers(in).effects(out).body([this] { out.set(in.get()); });
  }
};

double answer(int value, std::size_t /*index*/) { return 2.0 * value; }
double answer(const rx::Shared<Array>& value, std::size_t index) {
  return (*value)[(index * kStride) % value->size()];
}

template <class Payload>
class Worker : public rx::Reactor {
 public:
  rx::Input<Payload> in{"in", this};
  rx::Output<double> out{"out", this};
  Worker(std::string name, rx::Environment& env, std::size_t index)
      : Reactor(std::move(name), env, index) {
    reaction("answer").triggers(in).effects(out).body(
        [this] { out.set(answer(in.get(), bank_index())); });
  }
};

template <class Payload>
class Server : public rx::Reactor {
 public:
  rx::Output<Payload> out{"out", this};
  rx::InputMultiport<double> answers;
  rx::LogicalAction<> next{"next", this};

  Server(std::string name, rx::Environment& env, std::size_t width, int rounds, Payload payload)
      : Reactor(std::move(name), env),
        answers("answers", this, width),
        rounds_(rounds),
        payload_(std::move(payload)) {
    reaction("send").triggers(startup(), next).effects(out).body([this] { out.set(payload_); });
    reaction("gather").triggers(answers).effects(next).body([this] {
      for (std::size_t i = 0; i < answers.size(); ++i) {
        if (answers[i].is_present()) sum_ += answers[i].get();
      }
      if (++done_ < rounds_) {
        next.schedule();
      } else {
        request_stop();
      }
    });
  }
  [[nodiscard]] int rounds_done() const { return done_; }

 private:
  int rounds_;
  Payload payload_;
  int done_ = 0;
  double sum_ = 0.0;
};

double reactor_pingpong(int round_trips, unsigned workers) {
  rx::EnvironmentConfig config;
  config.workers = workers;
  rx::Environment env(config);
  auto& ping = env.add<Ping>("ping", round_trips);
  auto& pong = env.add<Pong>("pong");
  env.connect(ping.out, pong.in);
  env.connect(pong.out, ping.in);
  env.assemble();
  const auto start = Clock::now();
  env.run();
  const double seconds = seconds_since(start);
  if (ping.count() != round_trips) throw std::runtime_error("reactor ping-pong lost messages");
  return round_trips / seconds;
}

template <class Payload>
double reactor_broadcast(std::size_t width, int rounds, unsigned workers, Payload payload) {
  rx::EnvironmentConfig config;
  config.workers = workers;
  rx::Environment env(config);
  auto& server = env.add<Server<Payload>>("server", width, rounds, std::move(payload));
  auto bank = env.add_bank<Worker<Payload>>("worker", width);
  env.connect_broadcast(server.out, bank.ports(&Worker<Payload>::in));
  env.connect_each(bank.ports(&Worker<Payload>::out), server.answers);
  env.assemble();
  const auto start = Clock::now();
  env.run();
  const double seconds = seconds_since(start);
  if (server.rounds_done() != rounds) throw std::runtime_error("reactor broadcast lost rounds");
  return rounds / seconds;
}

// ---------------------------------------------------------------- CAF 0.17, event-based actors

using start_atom = caf::atom_constant<caf::atom("start")>;
using done_atom = caf::atom_constant<caf::atom("done")>;

caf::behavior caf_pong() {
  return {[](int value) { return value; }};
}

caf::behavior caf_ping(caf::event_based_actor* self, caf::actor pong, int round_trips,
                       caf::actor report_to) {
  return {
      [=](start_atom) { self->send(pong, 0); },
      [=](int value) {
        if (value + 1 < round_trips) {
          self->send(pong, value + 1);
        } else {
          self->send(report_to, done_atom::value, value + 1);
          self->quit();
        }
      },
  };
}

caf::behavior caf_worker(caf::event_based_actor* /*self*/, std::size_t index) {
  return {
      [=](int value) { return 2.0 * value; },
      [=](const Array& value) { return value[(index * kStride) % value.size()]; },
  };
}

struct ServerState {
  int answers = 0;
  int rounds_done = 0;
  double sum = 0.0;
};

caf::behavior caf_server(caf::stateful_actor<ServerState>* self, std::vector<caf::actor> workers,
                         caf::message payload, int rounds, caf::actor report_to) {
  auto broadcast = [self, workers, payload] {
    for (const caf::actor& worker : workers) self->send(worker, payload);
  };
  return {
      [=](start_atom) { broadcast(); },
      [=](double value) {
        self->state.sum += value;
        if (++self->state.answers < static_cast<int>(workers.size())) return;
        self->state.answers = 0;
        if (++self->state.rounds_done < rounds) {
          broadcast();
        } else {
          self->send(report_to, done_atom::value, self->state.rounds_done);
          for (const caf::actor& worker : workers)
            self->send_exit(worker, caf::exit_reason::user_shutdown);
          self->quit();
        }
      },
  };
}

/// Sends `start` to `actor` and returns the seconds until it reports `done` with `expected`.
double caf_time_until_done(caf::scoped_actor& self, const caf::actor& actor, int expected) {
  const auto start = Clock::now();
  self->send(actor, start_atom::value);
  int reported = -1;
  self->receive([&](done_atom, int count) { reported = count; });
  const double seconds = seconds_since(start);
  if (reported != expected) throw std::runtime_error("CAF benchmark lost messages");
  return seconds;
}

double caf_pingpong(caf::actor_system& system, int round_trips) {
  caf::scoped_actor self{system};
  auto pong = system.spawn(caf_pong);
  auto ping = system.spawn(caf_ping, pong, round_trips, caf::actor{self});
  const double seconds = caf_time_until_done(self, ping, round_trips);
  self->send_exit(pong, caf::exit_reason::user_shutdown);
  return round_trips / seconds;
}

double caf_broadcast(caf::actor_system& system, std::size_t width, int rounds,
                     const caf::message& payload) {
  caf::scoped_actor self{system};
  std::vector<caf::actor> workers;
  for (std::size_t i = 0; i < width; ++i) workers.push_back(system.spawn(caf_worker, i));
  auto server = system.spawn(caf_server, workers, payload, rounds, caf::actor{self});
  return rounds / caf_time_until_done(self, server, rounds);
}

}  // namespace

BenchReport run_reactors_bench(const BenchOptions& options) {
  const int round_trips = options.quick ? 20000 : 1000000;
  const int rounds = options.quick ? 2000 : 100000;
  BenchReport report("reactors");
  caf::actor_system_config caf_config;
  caf::actor_system system{caf_config};

  report.add("pingpong_reactor_1w", reactor_pingpong(round_trips, 1), "round_trips/s");
  report.add("pingpong_reactor_2w", reactor_pingpong(round_trips, 2), "round_trips/s");
  report.add("pingpong_caf", caf_pingpong(system, round_trips), "round_trips/s");
  report.add("reactor_tag_1w", 1e9 / report.value("pingpong_reactor_1w"), "ns/tag");
  report.add_ratio("pingpong: reactor/caf", "pingpong_reactor_1w", "pingpong_caf");
  report.add_ratio("pingpong: reactor_2w/caf", "pingpong_reactor_2w", "pingpong_caf");

  const auto array = rx::make_shared_value<Array>(kArrayElements, 1.5);
  const caf::message array_message = caf::make_message(Array(kArrayElements, 1.5));
  for (const std::size_t width : {2U, 4U, 8U, 16U}) {
    const std::string n = std::to_string(width);
    const std::string small = "broadcast_gather_" + n;
    const std::string large = "broadcast_gather_10MB_" + n;
    report.add(small + "_reactor_1w", reactor_broadcast(width, rounds, 1, 7), "rounds/s");
    report.add(small + "_reactor_2w", reactor_broadcast(width, rounds, 2, 7), "rounds/s");
    report.add(small + "_caf", caf_broadcast(system, width, rounds, caf::make_message(7)),
               "rounds/s");
    report.add(large + "_reactor_1w", reactor_broadcast(width, rounds, 1, array), "rounds/s");
    report.add(large + "_reactor_2w", reactor_broadcast(width, rounds, 2, array), "rounds/s");
    report.add(large + "_caf", caf_broadcast(system, width, rounds, array_message), "rounds/s");
    report.add_ratio(small + ": reactor/caf", small + "_reactor_1w", small + "_caf");
    report.add_ratio(small + ": reactor_2w/caf", small + "_reactor_2w", small + "_caf");
    report.add_ratio(large + ": reactor/caf", large + "_reactor_1w", large + "_caf");
    report.add_ratio(large + ": reactor_2w/caf", large + "_reactor_2w", large + "_caf");
  }
  report.add("broadcast_gather_10MB_16_reactor_1w_round",
             1e6 / report.value("broadcast_gather_10MB_16_reactor_1w"), "us");
  return report;
}

}  // namespace tagflow::bench
