// The Lingua Franca paper's figures (Kwok, Lohstroh, Lee, "Optimizing Distributed RL with Reactor
// Model and Lingua Franca", arXiv 2312.04704), as decoded from the authors' artifact
// jackyk02/parallel_rl_benchmarks (visualization/*, *.xlsx). Single-process
// multi-threaded LF (Python target) and Ray actors on a 32-core AWS machine; the harness printed
// every observation inside the timed loop.
#pragma once

namespace tagflow::bench::paper {

struct ReferenceFigure {
  const char* name;  // the row it sits beside, e.g. "gym_cartpole"
  double lingua_franca;
  double ray;  // 0: not published
  const char* unit;
};

inline constexpr ReferenceFigure kReferenceFigures[] = {
    // Gym sample generation, 15 envs, 10,000 rounds: 15 x 10,000 / wall seconds.
    {"gym_cartpole", 3813.9, 3276.5, "obs/s"},
    {"gym_blackjack", 7466.4, 5510.7, "obs/s"},
    {"gym_pendulum", 3646.1, 3223.7, "obs/s"},
    // Atari-sized (MsPacman/Pong/SpaceInvaders-v4, 15 envs, 1,000 rounds): Pong's figures.
    {"atari_pixelpong", 877.7, 75.9, "obs/s"},
    // Synchronized Q-learning, seconds to round 500, minibatch 500 / 1000 / 2000.
    {"qlearning_500", 94.22, 136.95, "s"},
    {"qlearning_1000", 95.09, 148.66, "s"},
    {"qlearning_2000", 95.97, 191.55, "s"},
    // MARL inference, 100k joint steps.
    {"marl_tj4", 71.64, 169.52, "s"},
    {"marl_tj10", 179.11, 917.03, "s"},
    // Broadcast + gather of a 10 MB float64 array, overhead per round.
    {"broadcast_2", 4.87, 11.72, "ms/round"},
    {"broadcast_4", 5.22, 13.03, "ms/round"},
    {"broadcast_8", 5.23, 16.49, "ms/round"},
    {"broadcast_16", 7.10, 24.27, "ms/round"},
    // Object size, 16 workers.
    {"object_10MB", 7.14, 24.11, "ms/round"},
    {"object_100MB", 145.76, 203.69, "ms/round"},
    {"object_300MB", 307.18, 477.52, "ms/round"},
    {"object_500MB", 511.03, 869.40, "ms/round"},
};

}  // namespace tagflow::bench::paper
