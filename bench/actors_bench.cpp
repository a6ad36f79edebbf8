// tagflow bench actors: what credit-based flow control costs in actor mode (actors/README.md).
//
// A real sampler actor (CartPole, 8 envs, local policy) feeds a consumer that grants a credit
// window and one credit back per message, as replay does. Figures: transitions messages per
// second with windows 1, 4 and 16 and with an unlimited window (no flow control), in one actor
// system; then the same over CAF's middleman between two actor systems on 127.0.0.1 (the
// multi-process case), windows 4 and 64. Ratios compare the windows with each other and remote
// with local, all measured in the same run.
#include <chrono>
#include <future>
#include <memory>
#include <string>

#include <caf/io/middleman.hpp>

#include "actors/actor_system_setup.hpp"
#include "bench/benchmarks.hpp"
#include "nodes/actor_interfaces.hpp"
#include "nodes/sampler/sampler_actor.hpp"

namespace tagflow::bench {
namespace {

using Clock = std::chrono::steady_clock;

// Grants `window` credits on an Offer and one back per message; after `count` messages it stops
// the sampler and reports the rate over them.
class CountingConsumer : public caf::event_based_actor {
 public:
  CountingConsumer(caf::actor_config& config, std::uint32_t window, std::size_t count,
                   std::promise<double>* rate)
      : caf::event_based_actor(config), window_(window), count_(count), rate_(rate) {}

  caf::behavior make_behavior() override {
    return {
        [this](const actors::Offer& offer) {
          send(caf::actor_cast<caf::actor>(current_sender()), actors::Credit{offer.port, window_});
        },
        [this](const nodes::TransitionsMessage&) {
          if (received_++ == 0) start_ = Clock::now();
          auto from = caf::actor_cast<caf::actor>(current_sender());
          if (received_ == count_) {
            const double seconds = std::chrono::duration<double>(Clock::now() - start_).count();
            rate_->set_value(static_cast<double>(count_ - 1) / seconds);
            send(from, actors::StopRun{"bench"});
            quit();
            return;
          }
          send(from, actors::Credit{"transitions", 1});
        },
        [](const actors::StopRun&) {},
    };
  }

 private:
  std::uint32_t window_;
  std::size_t count_;
  std::promise<double>* rate_;
  std::size_t received_ = 0;
  Clock::time_point start_;
};

nodes::SamplerConfig sampler_config() {
  nodes::SamplerConfig config;
  config.num_envs = 8;
  config.local_policy = true;
  config.seed = 5;
  return config;
}

double run_pair(caf::actor_system& sampler_system, caf::actor_system& consumer_system, bool remote,
                std::uint32_t window, std::size_t count) {
  std::promise<double> rate;
  auto result = rate.get_future();
  caf::actor consumer = consumer_system.spawn<CountingConsumer>(window, count, &rate);
  caf::actor target = consumer;
  if (remote) {
    auto port = consumer_system.middleman().publish(consumer, 0, "127.0.0.1");
    if (!port) throw std::runtime_error(consumer_system.render(port.error()));
    auto proxy = sampler_system.middleman().remote_actor("127.0.0.1", *port);
    if (!proxy) throw std::runtime_error(sampler_system.render(proxy.error()));
    target = *proxy;
  }
  auto report = std::make_shared<nodes::ReplicaReport>("sampler-0", "sampler");
  auto sampler =
      nodes::spawn_sampler_actor(sampler_system, sampler_config(), {"sampler-0", -1, report});
  caf::anon_send(sampler, actors::connect_atom::value, std::string("transitions"), target);
  const double value = result.get();
  sampler_system.await_all_actors_done();
  consumer_system.await_all_actors_done();
  return value;
}

}  // namespace

BenchReport run_actors_bench(const BenchOptions& options) {
  BenchReport report("actors");
  const std::size_t local_count = options.quick ? 2000 : 40000;
  const std::size_t remote_count = options.quick ? 500 : 10000;
  {
    auto config = actors::make_actor_system_config({false, 2});
    nodes::add_node_message_types(*config);
    caf::actor_system system{*config};
    for (const std::uint32_t window : {1U, 4U, 16U}) {
      report.add("local_window_" + std::to_string(window),
                 run_pair(system, system, false, window, local_count), "messages/s");
    }
    report.add("local_unlimited", run_pair(system, system, false, 1U << 30, local_count),
               "messages/s");
  }
  {
    auto sampler_config = actors::make_actor_system_config({true, 1});
    auto consumer_config = actors::make_actor_system_config({true, 1});
    nodes::add_node_message_types(*sampler_config);
    nodes::add_node_message_types(*consumer_config);
    caf::actor_system sampler_system{*sampler_config};
    caf::actor_system consumer_system{*consumer_config};
    for (const std::uint32_t window : {4U, 64U}) {
      report.add("remote_window_" + std::to_string(window),
                 run_pair(sampler_system, consumer_system, true, window, remote_count),
                 "messages/s");
    }
  }
  report.add_ratio("local: window 4 / unlimited", "local_window_4", "local_unlimited");
  report.add_ratio("local: window 1 / window 16", "local_window_1", "local_window_16");
  report.add_ratio("remote / local (window 4)", "remote_window_4", "local_window_4");
  report.add_ratio("remote: window 64 / window 4", "remote_window_64", "remote_window_4");
  return report;
}

}  // namespace tagflow::bench
