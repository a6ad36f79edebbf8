// `tagflow bench serve` (run by tagflow-torch): the inference service for outside programs
// (nodes/gateway/PROTOCOL.md) under load — one gateway hosting TrafficJunction10-v1's ten
// 1350→64→2 policies (a PolicyBankBackend, as an inference replica has), clients on their own
// threads with the C++ client (clients/cpp/gateway_client.hpp), each act carrying all ten agents'
// observations over TCP loopback. At 1, 4 and 16 clients: agent-actions/s and the p50/p99 latency
// of an act as a client sees it. The baseline, in the same run: a raw ZeroMQ DEALER/ROUTER round
// trip of the same request and reply bytes (an echo server answering with a reply-sized frame),
// one client; and the forward pass alone (PolicyBank::serve of one request, no sockets). Ratios:
// the raw round trip over the service's at 1 client, the same with the forward pass taken out of
// the service's (the goal, the service adding at most 2× the raw round trip, reads as
// either ≥ 0.5), and 16-client throughput over the raw round trip's requests/s × 10 agents.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <zmq.hpp>

#include "bench/benchmarks.hpp"
#include "bench/timing.hpp"
#include "clients/cpp/gateway_client.hpp"
#include "nodes/gateway/policy_bank_backend.hpp"
#include "nodes/gateway/service_gateway.hpp"
#include "rl/envs/registry.hpp"

namespace tagflow::bench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kAgents = 10;

nodes::PolicyBankConfig bank_config(int observation_size) {
  nodes::PolicyBankConfig c;
  c.agents.env = "TrafficJunction10-v1";
  c.agents.num_agents = kAgents;
  c.agents.observation_size = observation_size;
  c.agents.num_actions = 2;
  for (int a = 0; a < kAgents; ++a) {
    cluster::PolicyConfig p;
    p.name = "car_" + std::to_string(a);
    p.agents = {a};
    c.agents.policies.push_back(p);
    c.agents.agent_policy.push_back(a);
    c.hosted.push_back(a);
  }
  c.seed = 5;
  return c;
}

/// Ten observations of the env after a reset (what a client would send).
std::map<std::uint32_t, std::vector<float>> observations() {
  auto env = envs::make_multi_agent_env("TrafficJunction10-v1");
  const auto width = static_cast<std::size_t>(env->spec().observation_space.size());
  std::vector<float> all(width * kAgents);
  env->reset(5, envs::Span<float>(all));
  std::map<std::uint32_t, std::vector<float>> out;
  for (std::size_t a = 0; a < kAgents; ++a) {
    out[static_cast<std::uint32_t>(a)] = {
        all.begin() + static_cast<std::ptrdiff_t>(a * width),
        all.begin() + static_cast<std::ptrdiff_t>((a + 1) * width)};
  }
  return out;
}

struct LoadResult {
  double actions_per_second = 0, p50 = 0, p99 = 0;
  std::uint64_t busy = 0;
};

LoadResult load(const std::string& endpoint, int clients, int requests_per_client,
                const std::map<std::uint32_t, std::vector<float>>& obs) {
  std::vector<std::vector<double>> latencies(static_cast<std::size_t>(clients));
  std::atomic<std::uint64_t> actions{0}, busy{0};
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      clients::GatewayClient client(endpoint);
      (void)client.hello();
      ready.fetch_add(1);
      while (!go.load()) std::this_thread::yield();
      auto& mine = latencies[static_cast<std::size_t>(c)];
      for (int i = 0; i < requests_per_client; ++i) {
        const auto t0 = Clock::now();
        const clients::ActReply reply = client.act(obs);
        mine.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
        if (reply.ok) {
          actions.fetch_add(reply.actions.size());
        } else {
          busy.fetch_add(1);
        }
      }
    });
  }
  while (ready.load() < clients) std::this_thread::yield();
  const auto start = Clock::now();
  go = true;
  for (auto& t : threads) t.join();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::vector<double> all;
  for (const auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  return {static_cast<double>(actions.load()) / seconds, quantile(all, 0.5), quantile(all, 0.99),
          busy.load()};
}

/// The raw ZeroMQ baseline: a ROUTER that answers every request with `reply_bytes` bytes.
LoadResult raw_round_trip(int requests, const std::vector<std::uint8_t>& request,
                          std::size_t reply_bytes) {
  zmq::context_t server_context;
  zmq::socket_t router(server_context, zmq::socket_type::router);
  router.set(zmq::sockopt::linger, 0);
  router.bind("tcp://127.0.0.1:0");
  const std::string endpoint = router.get(zmq::sockopt::last_endpoint);
  std::thread server([&] {
    const std::vector<std::uint8_t> reply(reply_bytes, 0x80);
    for (int i = 0; i < requests; ++i) {
      zmq::message_t id, body;
      (void)router.recv(id);
      (void)router.recv(body);
      router.send(id, zmq::send_flags::sndmore);
      router.send(zmq::buffer(reply));
    }
  });
  zmq::context_t client_context;
  zmq::socket_t dealer(client_context, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::linger, 0);
  dealer.connect(endpoint);
  std::vector<double> latencies;
  const auto start = Clock::now();
  for (int i = 0; i < requests; ++i) {
    const auto t0 = Clock::now();
    dealer.send(zmq::buffer(request));
    zmq::message_t reply;
    (void)dealer.recv(reply);
    latencies.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  server.join();
  return {kAgents * requests / seconds, quantile(latencies, 0.5), quantile(latencies, 0.99), 0};
}

/// The bytes of an act request and of its reply, for the raw baseline.
std::pair<std::vector<std::uint8_t>, std::size_t> act_sizes(
    const std::string& endpoint, const std::map<std::uint32_t, std::vector<float>>& obs) {
  std::vector<std::uint8_t> request = clients::GatewayClient::act_request(1, obs);
  clients::GatewayClient client(endpoint);
  return {request, client.exchange_raw(request).size()};
}

/// The forward pass alone: one request of all ten agents through a PolicyBank, in this thread.
LoadResult compute_only(int requests, const nodes::PolicyBankConfig& config,
                        const std::map<std::uint32_t, std::vector<float>>& obs) {
  nodes::PolicyBank bank(config);
  nodes::AgentObservationsMessage request;
  request.observation_size = static_cast<std::uint32_t>(obs.at(0).size());
  for (const auto& [agent, values] : obs) {
    request.agents.push_back(agent);
    request.policies.push_back(agent);
    request.observations.insert(request.observations.end(), values.begin(), values.end());
  }
  std::vector<double> latencies;
  for (int i = 0; i < requests; ++i) {
    const auto t0 = Clock::now();
    const auto answers = bank.serve({request});
    latencies.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    do_not_optimize(answers.front().actions.front());
  }
  return {0, quantile(latencies, 0.5), quantile(latencies, 0.99), 0};
}

}  // namespace

BenchReport run_serve_bench(const BenchOptions& options) {
  BenchReport report("serve");
  const auto obs = observations();
  const int width = static_cast<int>(obs.at(0).size());
  gateway::GatewayConfig config;
  config.max_in_flight = 8;
  config.max_queue = 1024;
  nodes::PolicyBankConfig served = bank_config(width);  // as a replica's gateway serves
  served.rows_per_pass = config.largest_batch();
  gateway::ServiceGateway service(
      config, std::make_unique<gateway::PolicyBankBackend>("inference-0", served), nullptr);
  const int per_client_total = options.quick ? 64 : 4000;
  const auto [request, reply_bytes] = act_sizes(service.endpoint(), obs);
  (void)load(service.endpoint(), 1, options.quick ? 4 : 100, obs);  // warm up
  const LoadResult raw = raw_round_trip(per_client_total, request, reply_bytes);
  report.add("raw_round_trip_p50", raw.p50 * 1e6, "us");
  report.add("raw_round_trip_p99", raw.p99 * 1e6, "us");
  report.add("raw_round_trip_agent_actions", raw.actions_per_second, "actions/s");
  const LoadResult compute = compute_only(per_client_total, bank_config(width), obs);
  report.add("forward_pass_only_p50", compute.p50 * 1e6, "us");
  std::uint64_t busy = 0;
  for (const int clients : {1, 4, 16}) {
    const LoadResult r =
        load(service.endpoint(), clients, std::max(per_client_total / clients, 16), obs);
    const std::string name = "service_" + std::to_string(clients) + "_clients";
    report.add(name + "_agent_actions", r.actions_per_second, "actions/s");
    report.add(name + "_p50", r.p50 * 1e6, "us");
    report.add(name + "_p99", r.p99 * 1e6, "us");
    busy += r.busy;
  }
  report.add("busy_replies", static_cast<double>(busy), "replies");
  report.add("forward_passes", static_cast<double>(service.forward_passes()), "passes");
  report.add_ratio("p50_1_client: raw/service", "raw_round_trip_p50", "service_1_clients_p50");
  report.add(
      "service_1_client_p50_minus_forward_pass",
      std::max(report.value("service_1_clients_p50") - report.value("forward_pass_only_p50"), 1e-3),
      "us");
  report.add_ratio("p50_1_client_without_forward_pass: raw/service", "raw_round_trip_p50",
                   "service_1_client_p50_minus_forward_pass");
  report.add_ratio("actions_16_clients: service/raw", "service_16_clients_agent_actions",
                   "raw_round_trip_agent_actions");
  return report;
}

}  // namespace tagflow::bench
