#include "rl/envs/traffic_junction.hpp"

#include <set>
#include <vector>

#include <gtest/gtest.h>

namespace tagflow::envs {
namespace {

/// A TrafficJunction plus its buffers.
struct Junction {
  explicit Junction(TrafficJunctionOptions options) : env(options) {
    const auto n = static_cast<std::size_t>(options.num_agents);
    obs.resize(n * env.spec().observation_space.size());
    rewards.resize(n);
    dones.resize(n);
    env.reset(0, obs);
  }
  MultiAgentStepInfo step(std::vector<std::int64_t> actions) {
    return env.step(actions, obs, rewards, dones);
  }
  TrafficJunction env;
  std::vector<float> obs;
  std::vector<float> rewards;
  std::vector<std::uint8_t> dones;
};

TrafficJunctionOptions quiet(int agents) {
  TrafficJunctionOptions o;
  o.num_agents = agents;
  o.arrive_prob = 0.0;
  return o;
}

Car car_at(int row, int col, int dr, int dc, int route) {
  Car c;
  c.row = row;
  c.col = col;
  c.dr = dr;
  c.dc = dc;
  c.route = route;
  c.on_road = true;
  return c;
}

Car parked() {
  Car c;
  c.on_road = true;
  c.done = true;
  return c;
}

constexpr std::int64_t kGas = 0;
constexpr std::int64_t kBrake = 1;

TEST(TrafficJunction, ObservationSizesMatchMaGym) {
  EXPECT_EQ(TrafficJunction(TrafficJunctionOptions{}).spec().observation_space.size(), 324U);
  TrafficJunctionOptions ten;
  ten.num_agents = 10;
  EXPECT_EQ(TrafficJunction(ten).spec().observation_space.size(), 1350U);
  EXPECT_EQ(TrafficJunction(ten).spec().id, "TrafficJunction10-v1");
  ten.full_observable = false;
  EXPECT_EQ(TrafficJunction(ten).spec().observation_space.size(), 135U);
  EXPECT_EQ(TrafficJunction(ten).spec().action_space.to_string(), "Discrete(2)");
}

TEST(TrafficJunction, ResetPutsFourCarsAtTheGatesHeadingIn) {
  Junction j(quiet(4));
  std::set<std::pair<int, int>> gates;
  for (const Car& c : j.env.cars()) {
    EXPECT_TRUE(c.on_road);
    EXPECT_GE(c.route, 1);
    EXPECT_LE(c.route, 3);
    gates.insert({c.row, c.col});
    // Heading in: one step along the direction stays on the grid.
    EXPECT_EQ(j.env.cell(c.row + c.dr, c.col + c.dc), TrafficJunction::kEmpty);
  }
  EXPECT_EQ(gates, (std::set<std::pair<int, int>>{{7, 0}, {13, 7}, {6, 13}, {0, 6}}));
}

TEST(TrafficJunction, TenAgentsStartWithSixWaitingOffTheRoad) {
  Junction j(quiet(10));
  int waiting = 0;
  for (const Car& c : j.env.cars()) waiting += c.on_road ? 0 : 1;
  EXPECT_EQ(waiting, 6);
  EXPECT_EQ(j.env.cell(0, 0), 9);  // ma-gym marks waiting cars at (0, 0); the last one wins
}

TEST(TrafficJunction, GasMovesOneCellBrakeStaysAndTheStepCostGrows) {
  Junction j(quiet(2));
  j.env.set_car(0, car_at(7, 2, 0, 1, 1));
  j.env.set_car(1, parked());
  j.step({kGas, kGas});
  EXPECT_EQ(j.env.cars()[0].col, 3);
  EXPECT_EQ(j.env.cell(7, 3), 0);
  EXPECT_EQ(j.env.cell(7, 2), TrafficJunction::kEmpty);
  EXPECT_FLOAT_EQ(j.rewards[0], -0.01F);
  EXPECT_FLOAT_EQ(j.rewards[1], 0.0F);
  j.step({kBrake, kGas});
  EXPECT_EQ(j.env.cars()[0].col, 3);
  EXPECT_FLOAT_EQ(j.rewards[0], -0.02F);
}

TEST(TrafficJunction, RightTurnersTurnOnceAtTheirTurningCell) {
  Junction j(quiet(2));
  j.env.set_car(0, car_at(7, 5, 0, 1, 2));   // eastbound, turning right
  j.env.set_car(1, car_at(8, 7, -1, 0, 2));  // northbound, turning right
  j.step({kGas, kGas});
  EXPECT_EQ(j.env.cars()[0].col, 6);
  EXPECT_EQ(j.env.cars()[1].row, 7);
  j.step({kGas, kGas});
  EXPECT_EQ(j.env.cars()[0].row, 8);  // now southbound
  EXPECT_EQ(j.env.cars()[0].dr, 1);
  EXPECT_TRUE(j.env.cars()[0].turned);
  EXPECT_EQ(j.env.cars()[1].col, 8);  // now eastbound
  EXPECT_EQ(j.env.cars()[1].dc, 1);
  j.step({kGas, kGas});
  EXPECT_EQ(j.env.cars()[0].row, 9);
  EXPECT_EQ(j.env.cars()[0].col, 6);
}

TEST(TrafficJunction, LeftTurnersCrossTheJunctionFirst) {
  Junction j(quiet(2));
  j.env.set_car(0, car_at(7, 6, 0, 1, 3));  // eastbound, turning left at (7, 7)
  j.env.set_car(1, car_at(5, 6, 1, 0, 3));  // southbound, turning left at (7, 6)
  j.step({kGas, kGas});
  EXPECT_EQ(j.env.cars()[0].col, 7);
  EXPECT_EQ(j.env.cars()[1].row, 6);
  j.step({kGas, kGas});
  EXPECT_EQ(j.env.cars()[0].row, 6);  // northbound
  EXPECT_EQ(j.env.cars()[0].dr, -1);
  EXPECT_EQ(j.env.cars()[1].row, 7);  // reaches its turning cell
  j.step({kGas, kGas});
  EXPECT_EQ(j.env.cars()[1].col, 7);  // eastbound
  EXPECT_EQ(j.env.cars()[1].dc, 1);
}

TEST(TrafficJunction, DrivingIntoACarIsACollisionAndNoMove) {
  Junction j(quiet(2));
  j.env.set_car(0, car_at(7, 3, 0, 1, 1));
  j.env.set_car(1, car_at(7, 4, 0, 1, 1));
  const MultiAgentStepInfo info = j.step({kGas, kBrake});
  EXPECT_EQ(info.collisions, 1);
  EXPECT_FLOAT_EQ(j.rewards[0], -10.01F);
  EXPECT_FLOAT_EQ(j.rewards[1], -0.01F);
  EXPECT_EQ(j.env.cars()[0].col, 3);
  // Agents move in index order: when the car ahead moves first, the one behind follows.
  j.env.set_car(0, car_at(7, 5, 0, 1, 1));
  j.env.set_car(1, car_at(7, 4, 0, 1, 1));
  EXPECT_EQ(j.step({kGas, kGas}).collisions, 0);
  EXPECT_EQ(j.env.cars()[1].col, 5);
}

TEST(TrafficJunction, ReachingTheDestinationLeavesTheGrid) {
  Junction j(quiet(2));
  j.env.set_car(0, car_at(7, 12, 0, 1, 1));
  j.env.set_car(1, car_at(7, 1, 0, 1, 1));
  j.step({kGas, kBrake});
  EXPECT_EQ(j.dones[0], 1);
  EXPECT_EQ(j.dones[1], 0);
  EXPECT_EQ(j.env.cell(7, 13), TrafficJunction::kEmpty);
  const MultiAgentStepInfo info = j.step({kGas, kBrake});
  EXPECT_FLOAT_EQ(j.rewards[0], 0.0F);
  EXPECT_FALSE(info.episode_done);
}

TEST(TrafficJunction, EveryAgentIsDoneAfterMaxSteps) {
  Junction j(quiet(4));
  MultiAgentStepInfo info;
  for (int t = 0; t < 100; ++t) {
    ASSERT_FALSE(info.episode_done) << t;
    info = j.step({kBrake, kBrake, kBrake, kBrake});
  }
  EXPECT_TRUE(info.episode_done);
  EXPECT_EQ(j.dones, (std::vector<std::uint8_t>{1, 1, 1, 1}));
  // Braking for 100 steps costs 0.01 × (1 + ... + 100) per car.
  EXPECT_FLOAT_EQ(j.rewards[0], -1.0F);
  EXPECT_THROW(j.step({kBrake, kBrake, kBrake, kBrake}), std::logic_error);
}

TEST(TrafficJunction, ObservationsHoldIdLocationAndRouteOfNeighbours) {
  TrafficJunctionOptions o = quiet(2);
  Junction j(o);
  j.env.set_car(0, car_at(7, 3, 0, 1, 1));
  j.env.set_car(1, car_at(7, 4, 0, 1, 3));
  std::vector<float> obs(j.obs.size());
  j.env.observe(obs.data());
  ASSERT_EQ(obs.size(), 2U * 126U);
  constexpr std::size_t kFeature = 7;  // 2 ids + 2 coordinates + 3 routes
  auto features = [&](std::size_t view, std::size_t slot) {
    const float* p = obs.data() + view * 9 * kFeature + slot * kFeature;
    return std::vector<float>(p, p + kFeature);
  };
  const float r = 7.0F / 13.0F;
  EXPECT_EQ(features(0, 4), (std::vector<float>{1, 0, r, 3.0F / 13.0F, 1, 0, 0}));
  EXPECT_EQ(features(0, 5), (std::vector<float>{0, 1, r, 4.0F / 13.0F, 0, 0, 1}));
  EXPECT_EQ(features(1, 3), features(0, 4));
  EXPECT_EQ(features(1, 4), features(0, 5));
  EXPECT_EQ(features(0, 0), std::vector<float>(kFeature, 0.0F));
  // Full observability: both agents receive the same concatenation of views.
  EXPECT_TRUE(std::equal(obs.begin(), obs.begin() + 126, obs.begin() + 126));
}

TEST(TrafficJunction, PartialObservabilityGivesEachAgentItsOwnView) {
  TrafficJunctionOptions o = quiet(2);
  o.full_observable = false;
  Junction j(o);
  j.env.set_car(0, car_at(7, 3, 0, 1, 1));
  j.env.set_car(1, car_at(3, 6, 1, 0, 2));
  std::vector<float> obs(j.obs.size());
  j.env.observe(obs.data());
  ASSERT_EQ(obs.size(), 2U * 63U);
  EXPECT_FLOAT_EQ(obs[4 * 7 + 0], 1.0F);       // agent 0 sees itself in the centre
  EXPECT_FLOAT_EQ(obs[63 + 4 * 7 + 1], 1.0F);  // agent 1 too
  EXPECT_FLOAT_EQ(obs[63 + 4 * 7 + 5], 1.0F);  // route 2
}

TEST(TrafficJunction, AWaitingCarEntersAtAFreeGate) {
  TrafficJunctionOptions o;
  o.num_agents = 10;
  o.arrive_prob = 1.0;
  Junction j(o);
  std::vector<std::int64_t> brake(10, kBrake);
  j.step(brake);  // all gates still taken
  EXPECT_FALSE(j.env.cars()[4].on_road);
  std::vector<std::int64_t> gas(10, kGas);
  j.step(gas);  // the first four cars leave their gates
  const Car& c = j.env.cars()[4];
  EXPECT_TRUE(c.on_road);
  EXPECT_EQ(j.env.cell(c.row, c.col), 4);
  EXPECT_EQ(j.env.cell(c.row + c.dr, c.col + c.dc) != TrafficJunction::kWall, true);
  EXPECT_FALSE(j.env.cars()[5].on_road);
}

TEST(TrafficJunction, RandomEpisodesEndWhenEveryCarArrivedOrAtTheStepLimit) {
  TrafficJunctionOptions o;
  o.num_agents = 10;
  Junction j(o);
  std::uint64_t x = 12345;
  std::vector<std::int64_t> actions(10);
  int steps = 0;
  MultiAgentStepInfo info;
  do {
    for (auto& a : actions) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      a = static_cast<std::int64_t>((x >> 33) % 2);
    }
    info = j.step(actions);
    ++steps;
  } while (!info.episode_done);
  EXPECT_LE(steps, 100);
  if (steps < 100) {
    for (const Car& c : j.env.cars()) EXPECT_TRUE(c.on_road && c.done);
  }
  for (float v : j.obs) ASSERT_TRUE(v >= 0.0F && v <= 1.0F);
}

TEST(TrafficJunction, RejectsBadActionsAndBuffers) {
  Junction j(quiet(4));
  EXPECT_THROW(j.step({kGas, kGas, kGas}), std::invalid_argument);
  EXPECT_THROW(j.step({kGas, kGas, kGas, 2}), std::invalid_argument);
  std::vector<float> small(10);
  EXPECT_THROW(j.env.reset(0, small), std::invalid_argument);
  TrafficJunctionOptions bad;
  bad.num_agents = 11;
  EXPECT_THROW(TrafficJunction{bad}, std::invalid_argument);
}

}  // namespace
}  // namespace tagflow::envs
