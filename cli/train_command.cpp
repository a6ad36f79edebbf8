// `tagflow train` (run by tagflow-torch): single-process training with a progress line, a final
// greedy evaluation and a run summary JSON.
#include <cstdio>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/torch_commands.hpp"
#include "cli/train_options.hpp"
#include "common/atomic_file.hpp"
#include "common/numerics.hpp"
#include "nodes/kind/process_result.hpp"
#include "rl/learning/dqn_trainer.hpp"
#include "rl/learning/learner_checkpoint.hpp"
#include "rl/learning/torchscript_policy.hpp"

namespace tagflow::cli {
namespace {

void print_progress(const learning::TrainProgress& p) {
  std::printf(
      "step %8lld  steps/s %7.0f  updates/s %7.0f  return(last 20) %6.1f  eps %.3f  loss %.4f",
      static_cast<long long>(p.env_steps), p.steps_per_second, p.updates_per_second,
      p.recent_return, p.epsilon, p.loss);
  if (p.last_eval_return >= 0.0) std::printf("  eval %.1f", p.last_eval_return);
  std::printf("\n");
  std::fflush(stdout);
}

nlohmann::json summary_json(const learning::TrainSummary& s, const TrainOptions& options) {
  return {{"env", s.env_id},
          {"algo", options.algo},
          {"seed", s.seed},
          {"mean_return", s.mean_return},
          {"min_return", s.min_return},
          {"max_return", s.max_return},
          {"eval_episodes", s.eval_returns.size()},
          {"eval_returns", s.eval_returns},
          {"env_steps", s.env_steps},
          {"updates", s.updates},
          {"episodes", s.episodes},
          {"seconds", s.seconds},
          {"digest", s.digest},
          {"policy", s.policy},
          {"network", s.network.to_string()},
          {"torch_threads", options.threads},
          {"numerics", nlohmann::json::parse(nodes::numerics_json(numerics::process_report()))}};
}

void run_train(const TrainOptions& options) {
  // Run through `tagflow`, these were checked before LibTorch started; run directly, here.
  check_train_options(options);
  set_torch_threads(options.threads);
  std::cout << blas_startup_line() << "\n";
  if (!options.quiet) {
    std::cout << "training " << options.algo << " on " << options.config.env_id << ", seed "
              << options.config.seed << ", " << options.config.total_env_steps << " env steps, "
              << options.threads << " torch thread(s)\n";
  }
  learning::TrainSummary summary;
  try {
    summary = learning::train_dqn(options.config,
                                  options.quiet ? learning::ProgressCallback{} : print_progress);
  } catch (const std::invalid_argument& e) {
    fail_command("train", e.what(), kExitBadFile);
  }
  const nlohmann::json doc = summary_json(summary, options);
  std::cout << "mean_return " << summary.mean_return << " over " << summary.eval_returns.size()
            << " episodes (min " << summary.min_return << ", max " << summary.max_return << ")"
            << ", env_steps " << summary.env_steps << ", " << summary.seconds << " s, policy "
            << summary.policy << ", digest " << summary.digest << "\n";
  std::cout << "numerics: " << numerics::describe(numerics::process_report()) << "\n";
  try {
    if (!options.summary_path.empty()) {
      write_file_atomically(options.summary_path, doc.dump(2) + "\n");
    }
    if (!options.policy_path.empty()) {
      learning::export_torchscript(summary.network, summary.weights.values, options.policy_path);
    }
    if (!options.weights_path.empty()) {
      const std::vector<std::uint8_t> bytes = learning::encode_weights(summary.weights);
      write_file_atomically(options.weights_path, std::string(bytes.begin(), bytes.end()));
    }
  } catch (const std::exception& e) {
    fail_command("train", e.what(), kExitFailed);
  }
}

}  // namespace

void add_train_command(CLI::App& app) {
  auto options = std::make_shared<TrainOptions>();
  CLI::App* command = add_train_options(app, *options);
  command->callback([options] { run_train(*options); });
}

}  // namespace tagflow::cli
