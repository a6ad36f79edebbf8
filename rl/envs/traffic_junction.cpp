#include "rl/envs/traffic_junction.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "rl/envs/random.hpp"

namespace tagflow::envs {

TrafficJunction::TrafficJunction(const TrafficJunctionOptions& options)
    : TrafficJunction(options, "TrafficJunction" + std::to_string(options.num_agents) +
                                   (options.full_observable ? "-v1" : "-v0")) {}

TrafficJunction::TrafficJunction(const TrafficJunctionOptions& options, std::string id)
    : options_(options) {
  const int n = options.num_agents;
  const int g = options.grid_size;
  if (n < 1 || n > 10) throw std::invalid_argument("TrafficJunction: num_agents must be 1..10");
  if (g < 4 || g % 2 != 0)
    throw std::invalid_argument("TrafficJunction: grid_size must be even >= 4");
  if (options.arrive_prob < 0 || options.arrive_prob > 1 || options.max_steps < 1) {
    throw std::invalid_argument("TrafficJunction: arrive_prob in [0, 1] and max_steps >= 1");
  }
  const int h = g / 2;
  gates_ = {Cell{h, 0}, Cell{g - 1, h}, Cell{h - 1, g - 1}, Cell{0, h - 1}};
  destinations_ = {Cell{h, g - 1}, Cell{0, h}, Cell{h - 1, 0}, Cell{g - 1, h - 1}};
  const auto view = static_cast<std::int64_t>(9 * (n + kRoutes + 2));
  spec_.id = std::move(id);
  spec_.num_agents = n;
  spec_.observation_space = Space::box({options.full_observable ? view * n : view}, 0.0F, 1.0F);
  spec_.action_space = Space::discrete(2);
  spec_.max_episode_steps = options.max_steps;
  cars_.resize(static_cast<std::size_t>(n));
  build_grid();
}

void TrafficJunction::build_grid() {
  const int g = options_.grid_size;
  const int h = g / 2;
  grid_.assign(static_cast<std::size_t>(g * g), kWall);
  for (int i = 0; i < g; ++i) {
    at(h - 1, i) = kEmpty;
    at(h, i) = kEmpty;
    at(i, h - 1) = kEmpty;
    at(i, h) = kEmpty;
  }
}

bool TrafficJunction::valid(int row, int col) const noexcept {
  return row >= 0 && row < options_.grid_size && col >= 0 && col < options_.grid_size;
}

int& TrafficJunction::at(int row, int col) noexcept {
  return grid_[static_cast<std::size_t>(row * options_.grid_size + col)];
}

int TrafficJunction::cell(int row, int col) const noexcept {
  return valid(row, col) ? grid_[static_cast<std::size_t>(row * options_.grid_size + col)] : kWall;
}

std::array<int, 2> TrafficJunction::gate_direction(const Cell& gate) const {
  if (gate == gates_[0]) return {0, 1};   // west edge, heading east
  if (gate == gates_[1]) return {-1, 0};  // south edge, heading north
  if (gate == gates_[2]) return {0, -1};  // east edge, heading west
  return {1, 0};                          // north edge, heading south
}

TrafficJunction::Cell TrafficJunction::turning_cell(int dr, int dc, int route) const {
  const int h = options_.grid_size / 2;
  const bool right = route == 2;
  if (dr == 0 && dc == 1) return right ? Cell{h, h - 1} : Cell{h, h};
  if (dr == -1 && dc == 0) return right ? Cell{h, h} : Cell{h - 1, h};
  if (dr == 1 && dc == 0) return right ? Cell{h - 1, h - 1} : Cell{h, h - 1};
  return right ? Cell{h - 1, h} : Cell{h - 1, h - 1};  // heading west
}

void TrafficJunction::place_at_gate(int i, const Cell& gate) {
  Car& car = cars_[static_cast<std::size_t>(i)];
  const std::array<int, 2> dir = gate_direction(gate);
  car.row = gate.row;
  car.col = gate.col;
  car.dr = dir[0];
  car.dc = dir[1];
  car.on_road = true;
  car.turned = false;
  car.route = 1 + static_cast<int>(uniform_index(rng(), kRoutes));
  at(car.row, car.col) = i;
}

void TrafficJunction::reset_impl(float* observations) {
  build_grid();
  step_count_ = 0;
  // ma-gym shuffles its route table's keys: west, south, north, east gates.
  std::array<Cell, 4> shuffled = {gates_[0], gates_[1], gates_[3], gates_[2]};
  for (std::size_t i = shuffled.size() - 1; i > 0; --i) {
    std::swap(
        shuffled[i],
        shuffled[static_cast<std::size_t>(uniform_index(rng(), static_cast<std::int64_t>(i + 1)))]);
  }
  int placed = 0;
  for (int i = 0; i < spec_.num_agents; ++i) {
    Car& car = cars_[static_cast<std::size_t>(i)];
    car.on_road = false;
    car.turned = false;
    car.done = false;
    car.steps = 0;  // route and direction persist from the last episode, as in ma-gym
    if (placed >= 4) {
      car.row = 0;
      car.col = 0;
      at(0, 0) = i;  // ma-gym marks waiting cars at (0, 0); the last one wins
    } else {
      place_at_gate(i, shuffled[static_cast<std::size_t>(placed)]);
      ++placed;
    }
  }
  observe(observations);
}

bool TrafficJunction::move_car(int i, std::int64_t action) {
  if (action != 0) return false;  // brake
  Car& car = cars_[static_cast<std::size_t>(i)];
  if (car.route != 1) {
    const Cell turn = turning_cell(car.dr, car.dc, car.route);
    if (car.row == turn.row && car.col == turn.col && !car.turned) {
      // Right: east→south, south→west...; left the other way (rows grow southwards).
      const int sign = car.route == 2 ? (car.dc != 0 ? 1 : -1) : (car.dc != 0 ? -1 : 1);
      const int dr = car.dr;
      const int dc = car.dc;
      car.dr = dr == 0 ? dc * sign : 0;
      car.dc = dr == 0 ? 0 : dr * sign;
      car.turned = true;
    }
  }
  const int row = car.row + car.dr;
  const int col = car.col + car.dc;
  if (!valid(row, col)) return false;
  if (at(row, col) >= 0) return true;
  if (at(row, col) == kEmpty) {
    at(car.row, car.col) = kEmpty;
    car.row = row;
    car.col = col;
    at(row, col) = i;
  }
  return false;
}

MultiAgentStepInfo TrafficJunction::step_impl(const std::int64_t* actions, float* observations,
                                              float* rewards, std::uint8_t* dones) {
  ++step_count_;
  MultiAgentStepInfo info;
  for (int i = 0; i < spec_.num_agents; ++i) {
    Car& car = cars_[static_cast<std::size_t>(i)];
    float reward = 0.0F;
    if (!car.done && car.on_road) {
      ++car.steps;
      if (move_car(i, actions[i])) {
        reward += options_.collision_reward;
        ++info.collisions;
      }
      reward += options_.step_cost * static_cast<float>(car.steps);
    }
    rewards[i] = reward;
    if (std::find(destinations_.begin(), destinations_.end(), Cell{car.row, car.col}) !=
        destinations_.end()) {
      at(car.row, car.col) = kEmpty;
      car.done = true;
    }
    if (step_count_ >= options_.max_steps) car.done = true;
  }
  // A waiting car may enter (the draw happens every step, as in ma-gym).
  if (uniform01(rng()) < options_.arrive_prob) {
    std::array<Cell, 4> free;  // the gates no car stands on (a step's list: no allocation)
    std::size_t free_count = 0;
    for (const Cell& gate : gates_) {
      const bool taken = std::any_of(cars_.begin(), cars_.end(), [&](const Car& c) {
        return c.row == gate.row && c.col == gate.col;
      });
      if (!taken) free[free_count++] = gate;
    }
    const auto waiting =
        std::find_if(cars_.begin(), cars_.end(), [](const Car& c) { return !c.on_road; });
    if (waiting != cars_.end() && free_count != 0) {
      const Cell gate = free[static_cast<std::size_t>(
          uniform_index(rng(), static_cast<std::int64_t>(free_count)))];
      place_at_gate(static_cast<int>(waiting - cars_.begin()), gate);
    }
  }
  info.episode_done = true;
  for (int i = 0; i < spec_.num_agents; ++i) {
    dones[i] = cars_[static_cast<std::size_t>(i)].done ? 1 : 0;
    info.episode_done = info.episode_done && dones[i] != 0;
  }
  observe(observations);
  return info;
}

void TrafficJunction::write_features(int i, float* out) const {
  const int n = spec_.num_agents;
  const Car& car = cars_[static_cast<std::size_t>(i)];
  const auto scale = static_cast<double>(options_.grid_size - 1);
  out[i] = 1.0F;
  out[n] = static_cast<float>(car.row / scale);
  out[n + 1] = static_cast<float>(car.col / scale);
  int route_slot = car.route - 1;
  if (route_slot < 0) route_slot += kRoutes;  // Python's negative index for route −1
  out[n + 2 + route_slot] = 1.0F;
}

void TrafficJunction::observe(float* observations) const {
  const int n = spec_.num_agents;
  const std::size_t feature = static_cast<std::size_t>(n + kRoutes + 2);
  const std::size_t view = 9 * feature;
  const std::size_t total = static_cast<std::size_t>(n) * view;
  // Every agent's own 3×3 view, agent-major, into the first block.
  std::fill(observations, observations + total, 0.0F);
  for (int a = 0; a < n; ++a) {
    const Car& car = cars_[static_cast<std::size_t>(a)];
    float* out = observations + static_cast<std::size_t>(a) * view;
    for (int row = std::max(0, car.row - 1); row <= std::min(car.row + 1, options_.grid_size - 1);
         ++row) {
      for (int col = std::max(0, car.col - 1); col <= std::min(car.col + 1, options_.grid_size - 1);
           ++col) {
        const int id = cell(row, col);
        if (id < 0) continue;
        const std::size_t slot =
            static_cast<std::size_t>((row - car.row + 1) * 3 + (col - car.col + 1));
        write_features(id, out + slot * feature);
      }
    }
  }
  if (!options_.full_observable) return;
  // Full observability: each agent gets the concatenation of all views. Build it from the
  // back so the views (stored in the first `total` floats) are read before being overwritten.
  for (int a = n - 1; a >= 1; --a) {
    std::memcpy(observations + static_cast<std::size_t>(a) * total, observations,
                total * sizeof(float));
  }
}

void TrafficJunction::set_car(int agent, const Car& car) {
  if (agent < 0 || agent >= spec_.num_agents || !valid(car.row, car.col)) {
    throw std::invalid_argument("TrafficJunction::set_car: bad agent or position");
  }
  Car& old = cars_[static_cast<std::size_t>(agent)];
  if (at(old.row, old.col) == agent) at(old.row, old.col) = kEmpty;
  old = car;
  if (car.on_road && !car.done) at(car.row, car.col) = agent;
}

}  // namespace tagflow::envs
