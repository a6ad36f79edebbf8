// RoundWorkload: the shape shared by the Lingua Franca paper's gym, Atari-sized, broadcast +
// gather and object-size workloads (arXiv 2312.04704): a driver broadcasts one request to N
// workers, every worker answers, the driver gathers the N answers, and that is one round.
//
// The request and the answers are transport::Payload (immutable shared bytes), so the same
// kernels run in every placement: in one process a Payload is passed by pointer (a frame or a
// 10 MB array is shared, never copied); between processes its bytes are the message.
//   - kind "gym": the request holds one action per env (float32 each: a discrete index or a
//     continuous torque), drawn by the driver from one generator seeded with `seed` (the paper's
//     RandomState(1)); worker i steps env i with its action, resets it on the step after a
//     terminal or truncated one (auto-reset), and answers its observation (float32, or uint8
//     for pixel envs, written straight into the answer's buffer).
//   - kind "array": the request is `bytes` bytes of float64s, built once; each worker answers
//     with the array it received (in one process: the same shared bytes; between processes the
//     bytes travel back), so a round moves the array out to every worker and back.
//   - kind "qlearning": the paper's synchronized Q-learning (q_learning.hpp): the request is the
//     Q-network's weights; each worker runs 100 Blackjack-v1 steps ε-greedy (ε 0.1) with them and
//     answers its 100 experiences; when a round's answers are in, the driver adds them to a
//     20,000-experience replay, takes one Adam step (lr 0.01, γ 0.99) on a minibatch of
//     `minibatch` — the oldest ones (the artifact's behaviour) or, with `sample_replay`, a uniform
//     sample — and syncs the target network every 10 rounds.
// Thread-safety: a worker kernel is used by one thread at a time; the driver likewise.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/paper/q_learning.hpp"
#include "transport/payload.hpp"

namespace tagflow::bench::paper {

struct RoundWorkload {
  std::string kind = "gym";  // "gym" or "array"
  std::string env;           // gym: the env id, e.g. "CartPole-v1"
  std::size_t workers = 15;
  std::size_t bytes = 0;  // array: bytes of the broadcast array
  std::uint64_t seed = 1;
  int rounds = 100;
  std::size_t minibatch = 500;  // qlearning
  bool sample_replay = false;   // qlearning: a real sample instead of the oldest `minibatch`

  /// The workload as command-line words, for a worker process (parse_round_workload reverses it).
  [[nodiscard]] std::vector<std::string> to_args() const;
};

/// Reads the words to_args() wrote, from `args[first]` on; throws std::invalid_argument.
RoundWorkload parse_round_workload(const std::vector<std::string>& args, std::size_t first = 0);

/// One worker's side of a round: the answer to a request.
class RoundWorker {
 public:
  virtual ~RoundWorker() = default;
  [[nodiscard]] virtual transport::Payload respond(const transport::Payload& request) = 0;
};

/// Worker `index` (0-based) of `workload`. Throws std::invalid_argument on an unknown kind/env.
std::unique_ptr<RoundWorker> make_round_worker(const RoundWorkload& workload, std::size_t index);

/// The driver's side: makes each round's request and checks the answers it gathers.
class RoundDriver {
 public:
  explicit RoundDriver(const RoundWorkload& workload);
  /// The request of the next round.
  [[nodiscard]] transport::Payload next_request();
  /// Takes the answer of `worker`; throws std::runtime_error on an answer of the wrong size.
  /// With print_to set, writes every observation to it (the paper's harness printed them).
  void gather(std::size_t worker, const transport::Payload& answer);
  /// Answers gathered so far, and a checksum of their first element (keeps them observed).
  [[nodiscard]] std::uint64_t answers() const { return answers_; }
  [[nodiscard]] double checksum() const { return checksum_; }
  std::FILE* print_to = nullptr;

 private:
  RoundWorkload workload_;
  std::size_t answer_bytes_ = 0;
  bool discrete_ = true;  // gym: discrete actions in [0, action_n_); else a box in [low, high]
  std::int64_t action_n_ = 0;
  float action_low_ = 0.0F, action_high_ = 0.0F;
  bool pixels_ = false;
  std::mt19937_64 rng_;
  transport::Payload array_;
  std::unique_ptr<QLearner> learner_;
  std::unique_ptr<QReplay> replay_;
  std::uint64_t rounds_gathered_ = 0;
  std::uint64_t answers_ = 0;
  double checksum_ = 0.0;
};

}  // namespace tagflow::bench::paper
