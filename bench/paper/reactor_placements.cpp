// Reactor mode placements of a round workload (placements.hpp): the paper's LF program — a driver
// that broadcasts over `after 0` and gathers through a multiport — in one process, and the same
// reactors as federates, one process per worker.
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "bench/paper/child_processes.hpp"
#include "bench/paper/placements.hpp"
#include "coordinator/coordinator.hpp"
#include "federate/reactor_federate.hpp"
#include "reactors/reactors.hpp"
#include "transport/message_validator.hpp"

namespace tagflow::bench::paper {
namespace {

namespace rx = tagflow::reactors;
using transport::Payload;
using Clock = std::chrono::steady_clock;

/// Sends each round's request, gathers the answers, and stops after the last round.
class DriverReactor : public rx::Reactor {
 public:
  rx::Output<Payload> out{"out", this};
  rx::InputMultiport<Payload> answers;

  DriverReactor(std::string name, rx::Environment& env, RoundDriver& driver, std::size_t width,
                int rounds)
      : rx::Reactor(std::move(name), env), answers("answers", this, width), driver_(driver) {
    reaction("start").triggers(startup()).effects(out).body([this] {
      first_ = Clock::now();
      out.set(driver_.next_request());
    });
    reaction("gather").triggers(answers).effects(out).body([this, rounds] {
      for (std::size_t i = 0; i < answers.size(); ++i) {
        if (!answers[i].is_present()) throw std::runtime_error("paper bench: an answer is missing");
        driver_.gather(i, answers[i].get());
      }
      if (++done_ < rounds) {
        out.set(driver_.next_request());
      } else {
        last_ = Clock::now();
        request_stop();
      }
    });
  }
  [[nodiscard]] int rounds_done() const { return done_; }
  [[nodiscard]] double seconds() const {
    return std::chrono::duration<double>(last_ - first_).count();
  }

 private:
  RoundDriver& driver_;
  int done_ = 0;
  Clock::time_point first_, last_;
};

class WorkerReactor : public rx::Reactor {
 public:
  rx::Input<Payload> in{"in", this};
  rx::Output<Payload> out{"out", this};
  WorkerReactor(std::string name, rx::Environment& env, std::size_t index,
                const RoundWorkload& workload)
      : rx::Reactor(std::move(name), env, index), kernel_(make_round_worker(workload, index)) {
    reaction("respond").triggers(in).effects(out).body(
        [this] { out.set(kernel_->respond(in.get())); });
  }

 private:
  std::unique_ptr<RoundWorker> kernel_;
};

/// The driver federate "driver" and worker federates "w0".."wN-1": driver -> wi after 0 (the
/// paper's `after 0`), wi -> driver without delay.
coordinator::FederationSpec make_spec(std::size_t workers, const std::string& address) {
  coordinator::FederationSpec spec;
  spec.address = address;
  spec.heartbeat_timeout = std::chrono::seconds(30);
  coordinator::FederateSpec driver{"driver", {}, {}};
  for (std::size_t i = 0; i < workers; ++i) {
    const std::string id = "w" + std::to_string(i);
    driver.upstreams.push_back({id, std::nullopt});
    driver.downstreams.push_back(id);
    spec.federates.push_back({id, {{"driver", std::int64_t{0}}}, {"driver"}});
  }
  spec.federates.push_back(driver);
  spec.validate();
  return spec;
}

void run_worker_federate(const RoundWorkload& workload, const std::string& address,
                         std::size_t index) {
  const coordinator::FederationSpec spec = make_spec(workload.workers, address);
  coordinator::ReactorFederate federate(spec, "w" + std::to_string(index));
  const coordinator::WireTag start = federate.join(std::chrono::seconds(60));
  rx::EnvironmentConfig config;
  config.start_time_ns = start.time_ns();
  rx::Environment env(config);
  auto& from = env.add<coordinator::NetworkReceiver>("from_driver", federate, "driver", 1);
  auto& worker = env.add<WorkerReactor>("worker", index, workload);
  auto& to = env.add<coordinator::NetworkSender>("to_driver", federate, "driver", 1);
  env.connect(from.out, worker.in);
  env.connect(worker.out, to.in);
  federate.run(env);
}

}  // namespace

RoundRun run_plain_loop(const RoundWorkload& workload, std::FILE* print_to) {
  RoundDriver driver(workload);
  driver.print_to = print_to;
  std::vector<std::unique_ptr<RoundWorker>> workers;
  for (std::size_t i = 0; i < workload.workers; ++i) {
    workers.push_back(make_round_worker(workload, i));
  }
  const auto start = Clock::now();
  for (int round = 0; round < workload.rounds; ++round) {
    const Payload request = driver.next_request();
    for (std::size_t i = 0; i < workers.size(); ++i) driver.gather(i, workers[i]->respond(request));
  }
  return {std::chrono::duration<double>(Clock::now() - start).count(), driver.answers()};
}

RoundRun run_reactor_in_process(const RoundWorkload& workload, unsigned workers,
                                std::FILE* print_to) {
  RoundDriver driver(workload);
  driver.print_to = print_to;
  rx::EnvironmentConfig config;
  config.workers = workers;
  rx::Environment env(config);
  auto& server = env.add<DriverReactor>("driver", driver, workload.workers, workload.rounds);
  auto bank = env.add_bank<WorkerReactor>("worker", workload.workers, workload);
  env.connect_broadcast(server.out, bank.ports(&WorkerReactor::in), rx::Duration::zero());
  env.connect_each(bank.ports(&WorkerReactor::out), server.answers);
  env.assemble();
  env.run();
  if (server.rounds_done() != workload.rounds) {
    throw std::runtime_error("paper bench: the reactor program lost rounds");
  }
  return {server.seconds(), driver.answers()};
}

RoundRun run_reactor_processes(const RoundWorkload& workload) {
  if (workload.bytes > transport::ValidationPolicy{}.max_message_bytes) {
    // The worker would drop the message and the federation would wait for it forever.
    throw std::invalid_argument("paper bench: " + std::to_string(workload.bytes) +
                                " bytes is over a federate's message limit");
  }
  coordinator::FederationSpec spec = make_spec(workload.workers, "tcp://127.0.0.1:0");
  coordinator::Coordinator coordinator_process(spec);
  spec.address = coordinator_process.bind("tcp://127.0.0.1:*");
  std::thread coordinator_thread([&] { (void)coordinator_process.run(); });
  ChildProcesses children;
  RoundDriver driver(workload);
  int rounds_done = 0;
  double seconds = 0.0;
  try {
    for (std::size_t i = 0; i < workload.workers; ++i) {
      std::vector<std::string> args{"bench-paper-worker", "--federate", spec.address, "--index",
                                    std::to_string(i)};
      const std::vector<std::string> shape = workload.to_args();
      args.insert(args.end(), shape.begin(), shape.end());
      children.start("w" + std::to_string(i), args);
    }
    coordinator::ReactorFederate federate(spec, "driver");
    const coordinator::WireTag start = federate.join(std::chrono::seconds(60));
    rx::EnvironmentConfig config;
    config.start_time_ns = start.time_ns();
    rx::Environment env(config);
    auto& server = env.add<DriverReactor>("driver", driver, workload.workers, workload.rounds);
    for (std::size_t i = 0; i < workload.workers; ++i) {
      const std::string id = "w" + std::to_string(i);
      auto& to = env.add<coordinator::NetworkSender>("to_" + id, federate, id, 1);
      auto& from = env.add<coordinator::NetworkReceiver>("from_" + id, federate, id, 1);
      env.connect(server.out, to.in);
      env.connect(from.out, server.answers[i]);
    }
    federate.run(env);
    rounds_done = server.rounds_done();
    seconds = server.seconds();
    children.wait_all(std::chrono::seconds(60));
  } catch (...) {
    coordinator_process.stop();
    coordinator_thread.join();
    throw;
  }
  coordinator_thread.join();
  if (rounds_done != workload.rounds) {
    throw std::runtime_error("paper bench: the federated program lost rounds");
  }
  return {seconds, driver.answers()};
}

int run_reactor_worker_federate(const RoundWorkload& workload, const std::string& address,
                                std::size_t index) {
  run_worker_federate(workload, address, index);
  return 0;
}

}  // namespace tagflow::bench::paper
