"""TrafficJunction (ma-gym's TrafficJunction10-v1 rules) in plain Python + NumPy.

The simulator the inference service example plays: cars crossing a 4-way junction on a 14x14 grid,
action 0 = gas, 1 = brake; a collision costs -10, every step on the road -0.01 x the car's steps.
Each agent observes all agents' 3x3 views (9 x (n + 5) floats each, 1350 for 10 cars), as tagflow's
C++ env does (rl/envs/traffic_junction.hpp); only the random draws differ.
"""
import random

import numpy as np

WALL, EMPTY, ROUTES = -2, -1, 3


class Car:
    def __init__(self):
        self.row = self.col = self.dr = self.dc = 0
        self.route = -1
        self.turned = self.on_road = self.done = False
        self.steps = 0


class TrafficJunction:
    def __init__(self, num_agents=10, grid_size=14, arrive_prob=0.5, max_steps=100, seed=0):
        self.n, self.g, self.arrive_prob, self.max_steps = num_agents, grid_size, arrive_prob, max_steps
        self.rng = random.Random(seed)
        h = grid_size // 2
        self.gates = [(h, 0), (grid_size - 1, h), (h - 1, grid_size - 1), (0, h - 1)]
        self.destinations = [(h, grid_size - 1), (0, h), (h - 1, 0), (grid_size - 1, h - 1)]
        self.feature = num_agents + ROUTES + 2
        self.observation_size = 9 * self.feature * num_agents
        self.cars = [Car() for _ in range(num_agents)]
        self.steps = 0
        self._build_grid()

    def _build_grid(self):
        g, h = self.g, self.g // 2
        self.grid = np.full((g, g), WALL, dtype=np.int64)
        self.grid[h - 1, :] = self.grid[h, :] = self.grid[:, h - 1] = self.grid[:, h] = EMPTY

    def _gate_direction(self, gate):
        return {self.gates[0]: (0, 1), self.gates[1]: (-1, 0), self.gates[2]: (0, -1)}.get(gate, (1, 0))

    def _turning_cell(self, dr, dc, route):
        h, right = self.g // 2, route == 2
        if (dr, dc) == (0, 1):
            return (h, h - 1) if right else (h, h)
        if (dr, dc) == (-1, 0):
            return (h, h) if right else (h - 1, h)
        if (dr, dc) == (1, 0):
            return (h - 1, h - 1) if right else (h, h - 1)
        return (h - 1, h) if right else (h - 1, h - 1)

    def _place(self, i, gate):
        car = self.cars[i]
        car.row, car.col = gate
        car.dr, car.dc = self._gate_direction(gate)
        car.on_road, car.turned = True, False
        car.route = 1 + self.rng.randrange(ROUTES)
        self.grid[car.row, car.col] = i

    def reset(self):
        """Observations of every agent: an array num_agents x observation_size (float32)."""
        self._build_grid()
        self.steps = 0
        gates = [self.gates[0], self.gates[1], self.gates[3], self.gates[2]]
        self.rng.shuffle(gates)
        placed = 0
        for i, car in enumerate(self.cars):
            car.on_road = car.turned = car.done = False
            car.steps = 0
            if placed >= 4:
                car.row = car.col = 0
                self.grid[0, 0] = i
            else:
                self._place(i, gates[placed])
                placed += 1
        return self.observe()

    def _move(self, i, action):
        if action != 0:
            return False
        car = self.cars[i]
        if car.route != 1 and (car.row, car.col) == self._turning_cell(car.dr, car.dc, car.route) \
                and not car.turned:
            sign = (1 if car.dc != 0 else -1) if car.route == 2 else (-1 if car.dc != 0 else 1)
            dr, dc = car.dr, car.dc
            car.dr, car.dc = (dc * sign, 0) if dr == 0 else (0, dr * sign)
            car.turned = True
        row, col = car.row + car.dr, car.col + car.dc
        if not (0 <= row < self.g and 0 <= col < self.g):
            return False
        if self.grid[row, col] >= 0:
            return True
        if self.grid[row, col] == EMPTY:
            self.grid[car.row, car.col] = EMPTY
            car.row, car.col = row, col
            self.grid[row, col] = i
        return False

    def step(self, actions):
        """actions: one int per agent. Returns (observations, rewards, dones, episode_done)."""
        self.steps += 1
        rewards = np.zeros(self.n, dtype=np.float32)
        for i, car in enumerate(self.cars):
            if not car.done and car.on_road:
                car.steps += 1
                if self._move(i, int(actions[i])):
                    rewards[i] += -10.0
                rewards[i] += -0.01 * car.steps
            if (car.row, car.col) in self.destinations:
                self.grid[car.row, car.col] = EMPTY
                car.done = True
            if self.steps >= self.max_steps:
                car.done = True
        if self.rng.random() < self.arrive_prob:
            free = [gate for gate in self.gates
                    if not any((c.row, c.col) == gate for c in self.cars)]
            waiting = next((i for i, c in enumerate(self.cars) if not c.on_road), None)
            if waiting is not None and free:
                self._place(waiting, free[self.rng.randrange(len(free))])
        dones = [car.done for car in self.cars]
        return self.observe(), rewards, dones, all(dones)

    def observe(self):
        n, f = self.n, self.feature
        views = np.zeros((n, 9, f), dtype=np.float32)
        for a, car in enumerate(self.cars):
            for row in range(max(0, car.row - 1), min(car.row + 1, self.g - 1) + 1):
                for col in range(max(0, car.col - 1), min(car.col + 1, self.g - 1) + 1):
                    i = self.grid[row, col]
                    if i < 0:
                        continue
                    other = self.cars[i]
                    slot = (row - car.row + 1) * 3 + (col - car.col + 1)
                    views[a, slot, i] = 1.0
                    views[a, slot, n] = other.row / (self.g - 1)
                    views[a, slot, n + 1] = other.col / (self.g - 1)
                    views[a, slot, n + 2 + (other.route - 1) % ROUTES] = 1.0
        return np.tile(views.reshape(1, -1), (n, 1))
