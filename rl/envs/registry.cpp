#include "rl/envs/registry.hpp"

#include <functional>
#include <stdexcept>

#include "rl/envs/acrobot.hpp"
#include "rl/envs/atari_preprocessing.hpp"
#include "rl/envs/blackjack.hpp"
#include "rl/envs/cartpole.hpp"
#include "rl/envs/env_batch.hpp"
#include "rl/envs/mountain_car.hpp"
#include "rl/envs/pendulum.hpp"
#include "rl/envs/pixel_pong.hpp"
#include "rl/envs/traffic_junction.hpp"

namespace tagflow::envs {
namespace {

struct Factory {
  EnvEntry entry;
  std::function<std::unique_ptr<Env>()> make;
  std::function<std::unique_ptr<EnvBatch>(std::size_t)> make_batch;
  std::function<std::unique_ptr<MultiAgentEnv>()> make_multi;
};

template <typename E>
Factory single(const std::string& id, const std::string& description) {
  return {{id, description, false},
          [] { return std::make_unique<E>(); },
          [](std::size_t n) { return std::make_unique<EnvBatchOf<E>>(n); },
          nullptr};
}

Factory traffic_junction(int agents, bool full_observable) {
  TrafficJunctionOptions options;
  options.num_agents = agents;
  options.full_observable = full_observable;
  const std::string id =
      "TrafficJunction" + std::to_string(agents) + (full_observable ? "-v1" : "-v0");
  const std::string what = std::to_string(agents) + " cars at a 4-way junction (ma-gym), " +
                           (full_observable ? "every agent sees all views" : "3x3 views");
  return {{id, what, true}, nullptr, nullptr, [options, id] {
            return std::make_unique<TrafficJunction>(options, id);
          }};
}

const std::vector<Factory>& factories() {
  static const std::vector<Factory> all = {
      single<CartPole>("CartPole-v1", "pole balancing on a cart (Gymnasium classic control)"),
      single<MountainCar>("MountainCar-v0",
                          "drive up a hill with momentum (Gymnasium classic control)"),
      single<Acrobot>("Acrobot-v1", "swing a two-link arm up (Gymnasium classic control)"),
      single<Blackjack>(
          "Blackjack-v1",
          "card game against a dealer (Gymnasium toy text; natural=False, sab=False)"),
      single<Pendulum>("Pendulum-v1",
                       "swing a pendulum upright, continuous torque (Gymnasium classic control)"),
      single<PixelPong>(
          "PixelPongNoFrameskip-v0",
          "Pong-like game, raw 210x160x3 RGB frames, one frame per step (Atari stand-in)"),
      single<PixelPongAtari>(
          "PixelPong-v0",
          "PixelPong with Atari preprocessing: noop starts, frame skip 4, 84x84 grey, stack 4"),
      traffic_junction(4, true),
      traffic_junction(10, true),
      traffic_junction(4, false),
      traffic_junction(10, false),
  };
  return all;
}

const Factory& find(const std::string& id) {
  std::string known;
  for (const Factory& f : factories()) {
    if (f.entry.id == id && !f.entry.multi_agent) return f;
    if (!f.entry.multi_agent) known += (known.empty() ? "" : ", ") + f.entry.id;
  }
  throw std::invalid_argument("unknown env '" + id + "' (known: " + known + ")");
}

}  // namespace

const std::vector<EnvEntry>& registered_envs() {
  static const std::vector<EnvEntry> entries = [] {
    std::vector<EnvEntry> out;
    for (const Factory& f : factories()) out.push_back(f.entry);
    return out;
  }();
  return entries;
}

std::unique_ptr<Env> make_env(const std::string& id) { return find(id).make(); }

std::unique_ptr<MultiAgentEnv> make_multi_agent_env(const std::string& id) {
  std::string known;
  for (const Factory& f : factories()) {
    if (!f.entry.multi_agent) continue;
    if (f.entry.id == id) return f.make_multi();
    known += (known.empty() ? "" : ", ") + f.entry.id;
  }
  throw std::invalid_argument("unknown multi-agent env '" + id + "' (known: " + known + ")");
}

std::unique_ptr<EnvBatch> make_env_batch(const std::string& id, std::size_t n) {
  return find(id).make_batch(n);
}

}  // namespace tagflow::envs
