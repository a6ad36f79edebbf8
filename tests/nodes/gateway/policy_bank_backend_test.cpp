// The gateway over a real PolicyBank (nodes/gateway/policy_bank_backend.hpp): outside clients get
// exactly the actions the bank gives the cluster's own env, and weights offered while four clients
// keep asking swap in between forward passes — no request fails, the versions a client sees only
// grow, and the actions after the reload are the new weights' actions.
#include "nodes/gateway/policy_bank_backend.hpp"

#include <atomic>
#include <filesystem>
#include <random>
#include <thread>

#include <gtest/gtest.h>
#include <unistd.h>

#include "clients/cpp/gateway_client.hpp"
#include "nodes/gateway/service_gateway.hpp"
#include "rl/learning/mlp_spec.hpp"
#include "rl/learning/torchscript_policy.hpp"

namespace tagflow::gateway {
namespace {

using clients::GatewayClient;

/// 3 agents of 6 floats, 2 actions: policy "pair" (agents 0 and 1, with their one-hot index) and
/// "solo" (agent 2); hidden 8.
nodes::PolicyBankConfig config() {
  nodes::PolicyBankConfig c;
  c.agents.env = "Test-v0";
  c.agents.num_agents = 3;
  c.agents.observation_size = 6;
  c.agents.num_actions = 2;
  cluster::PolicyConfig pair;
  pair.name = "pair";
  pair.hidden = "8";
  pair.agent_id_input = true;
  pair.agents = {0, 1};
  cluster::PolicyConfig solo;
  solo.name = "solo";
  solo.hidden = "8";
  solo.agents = {2};
  c.agents.policies = {pair, solo};
  c.agents.agent_policy = {0, 0, 1};
  c.hosted = {0, 1};
  c.seed = 11;
  return c;
}

std::map<std::uint32_t, std::vector<float>> observations(int seed) {
  std::mt19937 rng(static_cast<unsigned>(seed));
  std::uniform_real_distribution<float> u(-1, 1);
  std::map<std::uint32_t, std::vector<float>> out;
  for (std::uint32_t a = 0; a < 3; ++a) {
    for (int i = 0; i < 6; ++i) out[a].push_back(u(rng));
  }
  return out;
}

/// What the bank itself answers for `obs`.
std::map<std::uint32_t, std::int64_t> bank_actions(
    nodes::PolicyBank& bank, const std::map<std::uint32_t, std::vector<float>>& obs) {
  nodes::AgentObservationsMessage r;
  r.observation_size = 6;
  for (const auto& [agent, values] : obs) {
    r.agents.push_back(agent);
    r.policies.push_back(agent < 2 ? 0 : 1);
    r.observations.insert(r.observations.end(), values.begin(), values.end());
  }
  const auto answers = bank.serve({r});
  std::map<std::uint32_t, std::int64_t> out;
  for (std::size_t j = 0; j < r.rows(); ++j) out[r.agents[j]] = answers.at(0).actions[j];
  return out;
}

TEST(PolicyBankBackendTest, ClientsGetTheActionsOfTheBank) {
  ServiceGateway gateway({}, std::make_unique<PolicyBankBackend>("inference-0", config()), nullptr);
  nodes::PolicyBank bank(config());
  GatewayClient client(gateway.endpoint());
  const auto hello = client.hello();
  EXPECT_EQ(hello.agents,
            (std::map<std::uint32_t, std::string>{{0, "pair"}, {1, "pair"}, {2, "solo"}}));
  for (int seed = 0; seed < 20; ++seed) {
    const auto obs = observations(seed);
    const auto reply = client.act(obs);
    ASSERT_TRUE(reply.ok) << reply.reason;
    EXPECT_EQ(reply.actions, bank_actions(bank, obs)) << "seed " << seed;
    EXPECT_EQ(reply.policies.at(1), "pair");
  }
}

TEST(PolicyBankBackendTest, AReloadUnderLoadFailsNoRequest) {
  ServiceGateway gateway({}, std::make_unique<PolicyBankBackend>("inference-0", config()), nullptr);
  const nodes::PolicyBankConfig c = config();
  std::atomic<bool> done{false};
  std::atomic<int> failures{0}, answered{0};
  std::vector<std::thread> clients;
  for (int k = 0; k < 4; ++k) {
    clients.emplace_back([&, k] {
      GatewayClient client(gateway.endpoint());
      std::uint64_t last = 0;
      for (int i = 0; !done.load(); ++i) {
        const auto reply = client.act(observations(k * 1000 + i % 50));
        if (!reply.ok || reply.versions.at(0) < last ||
            reply.versions.at(0) != reply.versions.at(1)) {
          failures.fetch_add(1);
        } else {
          last = reply.versions.at(0);
          answered.fetch_add(1);
        }
      }
    });
  }
  std::vector<float> newest;
  for (std::uint64_t v = 1; v <= 20; ++v) {
    newest = learning::init_mlp_parameters(c.network(0), 100 + v);
    gateway.offer_weights(0, nodes::WeightsMessage{v, newest});
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
  }
  while (answered.load() + failures.load() < 400) std::this_thread::yield();
  done = true;
  for (auto& t : clients) t.join();
  EXPECT_EQ(failures.load(), 0);
  // After the reload: the actions of the newest weights.
  nodes::PolicyBank bank(c);
  bank.on_weights(0, nodes::WeightsMessage{20, newest});
  GatewayClient client(gateway.endpoint());
  for (int seed = 0; seed < 10; ++seed) {
    const auto obs = observations(seed);
    const auto reply = client.act(obs);
    ASSERT_TRUE(reply.ok);
    EXPECT_EQ(reply.versions.at(0), 20U);
    EXPECT_EQ(reply.actions, bank_actions(bank, obs));
  }
}

TEST(PolicyBankBackendTest, ANewTorchScriptFileSwapsInWhileClientsKeepAsking) {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / ("tagflow_gateway_reload_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  nodes::PolicyBankConfig c = config();
  const learning::MlpSpec spec = c.network(1);
  learning::export_torchscript(spec, learning::init_mlp_parameters(spec, 1),
                               (dir / "solo.pt").string());
  c.agents.policies[1].torchscript = (dir / "solo.pt").string();
  ServiceGateway gateway({}, std::make_unique<PolicyBankBackend>("inference-0", c), nullptr);
  std::atomic<bool> done{false};
  std::atomic<int> failures{0};
  std::thread load([&] {
    GatewayClient client(gateway.endpoint());
    for (int i = 0; !done.load(); ++i) {
      if (!client.act(observations(i % 50)).ok) failures.fetch_add(1);
    }
  });
  GatewayClient client(gateway.endpoint());
  EXPECT_EQ(client.act(observations(0)).versions.at(2), 0U);
  // The new file is written beside the old one and renamed over it.
  learning::export_torchscript(spec, learning::init_mlp_parameters(spec, 2),
                               (dir / "next.pt").string());
  fs::rename(dir / "next.pt", dir / "solo.pt");
  std::uint64_t version = 0;
  for (int i = 0; i < 2000 && version == 0; ++i) {  // the gateway looks about once a second
    version = client.act(observations(1)).versions.at(2);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  done = true;
  load.join();
  EXPECT_EQ(version, 1U);
  EXPECT_EQ(failures.load(), 0);
  nodes::PolicyBank fresh(c);  // loads the new file
  for (int seed = 0; seed < 10; ++seed) {
    const auto obs = observations(seed);
    EXPECT_EQ(client.act(obs).actions, bank_actions(fresh, obs)) << seed;
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tagflow::gateway
