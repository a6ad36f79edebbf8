// TrafficJunction as in ma-gym (TrafficJunction4-v1 / 10-v1): cars crossing a 4-way junction.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "rl/envs/multi_agent_env.hpp"

namespace tagflow::envs {

struct TrafficJunctionOptions {
  int num_agents = 4;        ///< ma-gym's n_max, 1..10
  int grid_size = 14;        ///< square grid, even, >= 4
  double arrive_prob = 0.5;  ///< chance per step that a waiting car enters at a free gate
  float step_cost = -0.01F;  ///< per car and step, times the car's steps on the road
  float collision_reward = -10.0F;
  int max_steps = 100;
  bool full_observable = true;  ///< v1: every agent sees all agents' 3×3 views (v0: its own)
};

/// One car (agent). Positions are (row, col); directions unit (dr, dc); route 1 = straight,
/// 2 = turn right, 3 = turn left (−1 before the car first enters a road).
struct Car {
  int row = 0;
  int col = 0;
  int dr = 0;
  int dc = 0;
  int route = -1;
  bool turned = false;
  bool on_road = false;
  bool done = false;
  int steps = 0;  ///< steps on the road this episode (τ)
};

/// ma-gym's TrafficJunction, step for step (its Python `random` calls replaced by this env's
/// generator, so episodes differ while the rules are the same):
///  - a 14×14 grid of walls with two-lane roads crossing in the middle; four entry gates
///    (west, south, east, north edge) and four destinations;
///  - reset places the first min(n, 4) cars at the gates in shuffled order with random routes;
///    the others wait off-road (recorded at cell (0, 0), as ma-gym does);
///  - each step, in agent order, every car on the road and not done counts a step, then moves
///    with action 0 (gas: one cell along its route, turning once at its turning cell) or stays
///    with 1 (brake). Moving into another car is a collision: reward −10 and no move. Every such
///    car gets step_cost × its steps. A car on a destination is done and leaves the grid; at
///    max_steps every car is done. Then, with probability arrive_prob, the first waiting car
///    enters at a random free gate with a random route;
///  - observation per agent: for each of the 3×3 cells around a car, that cell's car as
///    [one-hot id (n), row/13, col/13, one-hot route (3)], zeros for none: 9·(n + 5) floats;
///    full_observable concatenates all agents' views: 324 floats for 4 agents, 1350 for 10.
/// The episode is done when every agent is done. See MultiAgentEnv for errors and threads.
class TrafficJunction final : public MultiAgentEnv {
 public:
  explicit TrafficJunction(const TrafficJunctionOptions& options = {});
  TrafficJunction(const TrafficJunctionOptions& options, std::string id);

  [[nodiscard]] const MultiAgentSpec& spec() const noexcept override { return spec_; }
  [[nodiscard]] const TrafficJunctionOptions& options() const noexcept { return options_; }
  [[nodiscard]] const std::vector<Car>& cars() const noexcept { return cars_; }
  [[nodiscard]] int steps() const noexcept { return step_count_; }
  /// The grid cell: kWall, kEmpty, or the index of the car marked there.
  [[nodiscard]] int cell(int row, int col) const noexcept;
  /// Test seam: replaces car `agent` (its grid mark moves with it).
  void set_car(int agent, const Car& car);
  /// Writes the current observations (num_agents × observation size floats).
  void observe(float* observations) const;

  static constexpr int kWall = -2;
  static constexpr int kEmpty = -1;
  static constexpr int kRoutes = 3;

 protected:
  void reset_impl(float* observations) override;
  MultiAgentStepInfo step_impl(const std::int64_t* actions, float* observations, float* rewards,
                               std::uint8_t* dones) override;

 private:
  struct Cell {
    int row;
    int col;
    bool operator==(const Cell& o) const { return row == o.row && col == o.col; }
  };
  void build_grid();
  bool valid(int row, int col) const noexcept;
  int& at(int row, int col) noexcept;
  /// Moves car i for one action; returns true on a collision.
  bool move_car(int i, std::int64_t action);
  void place_at_gate(int i, const Cell& gate);
  /// Features of car i as seen in a neighbour's view.
  void write_features(int i, float* out) const;
  Cell turning_cell(int dr, int dc, int route) const;
  std::array<int, 2> gate_direction(const Cell& gate) const;

  TrafficJunctionOptions options_;
  MultiAgentSpec spec_;
  std::array<Cell, 4> gates_{};  // entry gates, ma-gym's order
  std::array<Cell, 4> destinations_{};
  std::vector<int> grid_;
  std::vector<Car> cars_;
  int step_count_ = 0;
};

}  // namespace tagflow::envs
