#include "cli/train_options.hpp"

#include <cmath>
#include <cstdlib>

#include <cstdint>
#include <stdexcept>

#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "rl/envs/registry.hpp"

namespace tagflow::cli {
namespace {

/// A number that is one: NaN and the infinities pass CLI::Range (every comparison with NaN is
/// false), so the floating options check this first.
const CLI::Validator kFinite(
    [](std::string& text) {
      char* end = nullptr;
      const double value = std::strtod(text.c_str(), &end);
      if (end == text.c_str() || *end != '\0' || !std::isfinite(value)) {
        return "not a finite number: " + text;
      }
      return std::string();
    },
    "FINITE");

/// The largest count an option takes: 2^62, as a cluster file's counts.
constexpr std::int64_t kMaxCount = std::int64_t{1} << 62;

}  // namespace

CLI::App* add_train_options(CLI::App& app, TrainOptions& options) {
  learning::TrainConfig& c = options.config;
  auto* command = app.add_subcommand(
      "train",
      "Train a policy in one process (no cluster): progress line, greedy evaluation at the end, "
      "run summary JSON. Same seed => same digest.");
  command->add_option("--env", c.env_id, "Environment id")->capture_default_str();
  command->add_option("--algo", options.algo, "Algorithm (dqn)")->capture_default_str();
  command->add_option("--seed", c.seed, "Seed of the env, replay, exploration and weights")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{0}, std::uint64_t{1} << 62));  // as a cluster file's seed
  command->add_option("--summary", options.summary_path, "Write the run summary JSON here");
  command->add_option("--steps", c.total_env_steps, "Environment steps to train for")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{1}, kMaxCount));
  command->add_option("--learning-rate", c.dqn.learning_rate, "Adam learning rate")
      ->capture_default_str()
      ->check(kFinite)
      ->check(CLI::Range(1e-9, 1.0));
  command->add_option("--batch-size", c.batch_size, "Minibatch size")
      ->capture_default_str()
      ->check(CLI::Range(1, 65536));
  command->add_option("--hidden", c.dqn.network.hidden_sizes, "Hidden layer sizes")
      ->capture_default_str();
  command->add_option("--learning-starts", c.learning_starts, "Env steps before the first update")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{0}, kMaxCount));
  command->add_option("--train-every", c.train_every, "Env steps between training rounds")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{1}, kMaxCount));
  command->add_option("--updates-per-round", c.updates_per_round, "Updates per training round")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  command->add_option("--target-sync", c.dqn.target_update, "Updates between hard target syncs")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{1}, kMaxCount));
  command->add_option("--tau", c.dqn.target_tau, "Soft target update rate (0: hard syncs)")
      ->capture_default_str()
      ->check(kFinite)
      ->check(CLI::Range(0.0, 1.0));
  command->add_option("--gamma", c.gamma, "Discount")
      ->capture_default_str()
      ->check(kFinite)
      ->check(CLI::Range(0.0, 1.0));
  command->add_option("--epsilon-end", c.epsilon.end, "Final exploration rate")
      ->capture_default_str()
      ->check(kFinite)
      ->check(CLI::Range(0.0, 1.0));
  command->add_option("--epsilon-steps", c.epsilon.decay_steps, "Env steps of epsilon decay")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{0}, kMaxCount));
  command
      ->add_option("--final-lr-fraction", c.final_learning_rate_fraction,
                   "Learning rate at the end as a fraction of the initial one")
      ->capture_default_str()
      ->check(kFinite)
      ->check(CLI::Range(1e-6, 1.0));
  command->add_option("--max-grad-norm", c.dqn.max_grad_norm, "Gradient clipping norm (0: none)")
      ->capture_default_str()
      ->check(kFinite)
      ->check(CLI::Range(0.0, 1e9));
  command
      ->add_option("--eval-every", c.eval_every, "Env steps between interval evaluations (0: none)")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{0}, kMaxCount));
  command
      ->add_option("--eval-interval-episodes", c.eval_interval_episodes,
                   "Episodes per interval evaluation")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  command->add_flag("--keep-best,!--keep-final", c.keep_best,
                    "Return the best interval-evaluated weights (the default; --keep-final: the "
                    "final ones)");
  command->add_flag("--stop-at-threshold,!--no-stop-at-threshold", c.stop_at_threshold,
                    "Stop once an interval evaluation reaches the env's reward threshold and a "
                    "second one on other episodes confirms it (the default; "
                    "--no-stop-at-threshold: run every --steps)");
  command->add_option("--n-step", c.n_step, "n-step returns")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  auto* prioritized =
      command->add_flag("--prioritized", c.prioritized, "Prioritized replay (else uniform)");
  command
      ->add_flag("--binary-sum-tree", c.binary_sum_tree,
                 "With --prioritized: the textbook binary sum tree instead of the K-ary one "
                 "(the baseline of PAL's comparison)")
      ->needs(prioritized);
  command->add_option("--eval-episodes", c.eval_episodes, "Final evaluation episodes")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  command->add_option("--save-policy", options.policy_path,
                      "Export the trained policy as a TorchScript module file");
  command->add_option(
      "--save-weights", options.weights_path,
      "Write the trained weights as a weights buffer (rl/learning/weights_buffer.hpp)");
  command
      ->add_option("--threads", options.threads,
                   "LibTorch intra-op threads (1 keeps runs bit-reproducible)")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  // Read before main() goes on (cli/process_numerics.hpp); listed here for --help and checking.
  command
      ->add_option("--numerics", options.numerics,
                   "portable: the same digest on every x86-64-v3 machine; native: the CPU's "
                   "fastest kernels (common/numerics.hpp)")
      ->capture_default_str()
      ->check(CLI::IsMember({"portable", "native"}));
  command->add_flag("--quiet", options.quiet, "No progress lines");
  return command;
}

void check_train_options(const TrainOptions& options) {
  if (options.algo != "dqn") {
    fail_command("train", "unknown --algo '" + options.algo + "' (known: dqn)", kExitBadFile);
  }
  // What the run writes at its end: a path it cannot be written to is refused now.
  for (const auto& [option, path] :
       {std::pair<const char*, const std::string&>{"--summary", options.summary_path},
        {"--save-policy", options.policy_path},
        {"--save-weights", options.weights_path}}) {
    if (const std::string why = unwritable_output(option, path); !why.empty()) {
      fail_command("train", why, kExitBadFile);
    }
  }
  try {  // an unknown env is refused before anything is said about the run
    (void)envs::make_env(options.config.env_id);
  } catch (const std::invalid_argument& e) {
    fail_command("train", e.what(), kExitBadFile);
  }
}

int refuse_train_early(int argc, char** argv) {
  TrainOptions options;
  return refuse_before_torch(argc, argv, [&options](CLI::App& app) {
    add_train_options(app, options)->callback([&options] { check_train_options(options); });
  });
}

}  // namespace tagflow::cli
