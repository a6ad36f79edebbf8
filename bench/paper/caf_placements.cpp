// Actor mode placements of a round workload (placements.hpp): CAF 0.17 event-based actors, in
// one actor system and with every worker in a process of its own (CAF's middleman over TCP).
#include <chrono>
#include <fstream>
#include <stdexcept>
#include <thread>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include "actors/actor_system_setup.hpp"
#include "bench/paper/child_processes.hpp"
#include "bench/paper/placements.hpp"
#include "common/atomic_file.hpp"

// In one actor system a Payload travels by pointer (shared bytes, never serialized).
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(tagflow::transport::Payload)

namespace tagflow::bench::paper {
namespace {

using transport::Payload;
using Clock = std::chrono::steady_clock;
using start_atom = caf::atom_constant<caf::atom("pstart")>;
using done_atom = caf::atom_constant<caf::atom("pdone")>;

/// Bytes as a CAF message element: a Payload in one process, a std::string between processes.
Payload as_payload(const Payload& value) { return value; }
Payload as_payload(const std::string& value) {
  Payload view;
  view.data = value.data();
  view.size = value.size();
  return view;  // borrowed: used while `value` lives
}
template <class Message>
Message from_payload(const Payload& value);
template <>
Payload from_payload<Payload>(const Payload& value) {
  return value;
}
template <>
std::string from_payload<std::string>(const Payload& value) {
  return std::string(value.view());
}

template <class Message>
caf::behavior worker_actor(caf::event_based_actor* /*self*/, std::uint64_t index,
                           std::shared_ptr<RoundWorker> kernel) {
  return {[=](const Message& request) {
    return std::make_tuple(index, from_payload<Message>(kernel->respond(as_payload(request))));
  }};
}

struct DriverState {
  std::size_t answers = 0;
  int rounds_done = 0;
  Clock::time_point first, last;
};

/// Sends the round's request (one message, shared by every send) to each worker, gathers the
/// N answers, starts the next round; reports `done` with the rounds to `report_to`.
template <class Message>
caf::behavior driver_actor(caf::stateful_actor<DriverState>* self, std::vector<caf::actor> workers,
                           RoundDriver* driver, int rounds, caf::actor report_to) {
  auto broadcast = [self, workers, driver] {
    const caf::message request = caf::make_message(from_payload<Message>(driver->next_request()));
    for (const caf::actor& worker : workers) self->send(worker, request);
  };
  return {
      [=](start_atom) {
        self->state.first = Clock::now();
        broadcast();
      },
      [=](std::uint64_t index, const Message& answer) {
        driver->gather(index, as_payload(answer));
        if (++self->state.answers < workers.size()) return;
        self->state.answers = 0;
        if (++self->state.rounds_done < rounds) {
          broadcast();
          return;
        }
        self->state.last = Clock::now();
        const double seconds =
            std::chrono::duration<double>(self->state.last - self->state.first).count();
        self->send(report_to, done_atom::value, self->state.rounds_done, seconds);
        self->quit();
      },
  };
}

template <class Message>
RoundRun drive(caf::actor_system& system, const std::vector<caf::actor>& workers,
               const RoundWorkload& workload) {
  RoundDriver driver(workload);
  caf::scoped_actor self{system};
  auto actor =
      system.spawn(driver_actor<Message>, workers, &driver, workload.rounds, caf::actor{self});
  self->send(actor, start_atom::value);
  int rounds_done = -1;
  double seconds = 0.0;
  self->receive([&](done_atom, int rounds, double s) {
    rounds_done = rounds;
    seconds = s;
  });
  for (const caf::actor& worker : workers) {
    self->monitor(worker);
    self->send_exit(worker, caf::exit_reason::user_shutdown);
  }
  // Until every worker is down: ending the actor system first could close a worker process's
  // connection with its exit still queued, and that process would then wait for ever.
  for (std::size_t down = 0; down < workers.size(); ++down) {
    bool late = false;
    self->receive([](const caf::down_msg&) {},
                  caf::after(std::chrono::seconds(30)) >> [&] { late = true; });
    if (late) break;
  }
  if (rounds_done != workload.rounds) throw std::runtime_error("paper bench: CAF lost rounds");
  return {seconds, driver.answers()};
}

}  // namespace

RoundRun run_caf_in_process(caf::actor_system& system, const RoundWorkload& workload) {
  std::vector<caf::actor> workers;
  for (std::size_t i = 0; i < workload.workers; ++i) {
    workers.push_back(system.spawn(worker_actor<Payload>, std::uint64_t{i},
                                   std::shared_ptr<RoundWorker>(make_round_worker(workload, i))));
  }
  return drive<Payload>(system, workers, workload);
}

RoundRun run_caf_processes(const RoundWorkload& workload) {
  ChildProcesses children;
  for (std::size_t i = 0; i < workload.workers; ++i) {
    std::vector<std::string> args{"bench-paper-worker", "--actor-port-file",
                                  (children.dir() / ("port_" + std::to_string(i))).string(),
                                  "--index", std::to_string(i)};
    const std::vector<std::string> shape = workload.to_args();
    args.insert(args.end(), shape.begin(), shape.end());
    children.start("w" + std::to_string(i), args);
  }
  auto config = actors::make_actor_system_config({true, 0});
  RoundRun run;
  {
    caf::actor_system system{*config};
    std::vector<caf::actor> workers;
    for (std::size_t i = 0; i < workload.workers; ++i) {
      const auto file = children.dir() / ("port_" + std::to_string(i));
      children.wait_for_file(file, std::chrono::seconds(60));
      std::uint16_t port = 0;
      std::ifstream(file) >> port;
      auto worker = system.middleman().remote_actor("127.0.0.1", port);
      if (!worker) {
        throw std::runtime_error("paper bench: cannot reach worker actor " + std::to_string(i) +
                                 ": " + system.render(worker.error()));
      }
      workers.push_back(*worker);
    }
    run = drive<std::string>(system, workers, workload);
  }
  children.wait_all(std::chrono::seconds(60));
  return run;
}

int run_caf_worker_process(const RoundWorkload& workload, const std::string& port_file,
                           std::size_t index) {
  // One actor per process: one scheduler thread, as the federated worker's single-thread
  // reactor environment (16 processes share the machine's cores).
  auto config = actors::make_actor_system_config({true, 1});
  caf::actor_system system{*config};
  auto worker = system.spawn(worker_actor<std::string>, std::uint64_t{index},
                             std::shared_ptr<RoundWorker>(make_round_worker(workload, index)));
  auto port = system.middleman().publish(worker, 0, "127.0.0.1", true);
  if (!port) {
    std::fprintf(stderr, "cannot publish: %s\n", system.render(port.error()).c_str());
    return 1;
  }
  write_file_atomically(port_file, std::to_string(*port) + "\n");
  caf::scoped_actor self{system};
  self->monitor(worker);
  self->receive([](const caf::down_msg&) {});
  std::fflush(nullptr);
  std::_Exit(0);  // the middleman's shutdown is not part of the benchmark
}

}  // namespace tagflow::bench::paper
