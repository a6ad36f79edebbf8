// `tagflow bench learner` (run by tagflow-torch): how fast the LibTorch learner updates and acts.
//
// DQN updates per second (forward of online and target networks, Huber loss, backward, clipping,
// Adam, target sync) at batch 64 and 256, on the CartPole Q-network used by `tagflow train` and
// on the 1350→64→2 MARL policy (TrafficJunction, 10 agents). Batched inference latency at batch
// 1, 16 and 64 on the MARL policy, three ways: the flat-parameter PolicyNetwork, the same weights
// as a TorchScript module, and a plain C++ loop (no framework) as the ceiling. One intra-op
// thread, as in training.
//
// Pinned kernels against the CPU's own (common/numerics.hpp): run under `numerics: portable` (the
// default), the benchmark measures the same figures again in a child process under `native` and
// records, per figure, the pinned kernels' speed as a fraction of the native ones'
// ("pinned/native ..." ratios: updates/s pinned ÷ native, latency native ÷ pinned).
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/benchmarks.hpp"
#include "bench/timing.hpp"
#include "common/numerics.hpp"
#include "rl/learning/dqn_learner.hpp"
#include "rl/learning/dqn_trainer.hpp"
#include "rl/learning/policy_network.hpp"
#include "rl/learning/torchscript_policy.hpp"

namespace tagflow::bench {
namespace {

using learning::MlpSpec;

std::vector<float> random_floats(std::size_t count, std::uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::normal_distribution<float> normal(0.0F, 1.0F);
  std::vector<float> values(count);
  for (float& v : values) v = normal(engine);
  return values;
}

learning::TransitionBatch random_batch(const MlpSpec& spec, std::int64_t size) {
  learning::TransitionBatch batch;
  batch.size = size;
  const auto obs = static_cast<std::size_t>(size * spec.input_size);
  batch.observations = random_floats(obs, 1);
  batch.next_observations = random_floats(obs, 2);
  batch.rewards = random_floats(static_cast<std::size_t>(size), 3);
  batch.discounts.assign(static_cast<std::size_t>(size), 0.99F);
  for (std::int64_t i = 0; i < size; ++i) batch.actions.push_back(i % spec.output_size);
  return batch;
}

double updates_per_second(const MlpSpec& spec, std::int64_t batch_size,
                          const TimingOptions& timing) {
  learning::DqnConfig config;
  config.network = spec;
  learning::DqnLearner learner(config);
  const learning::TransitionBatch batch = random_batch(spec, batch_size);
  (void)learner.update(batch);  // warm-up: first-call allocations
  return 1.0 / seconds_per_call([&] { do_not_optimize(learner.update(batch).loss); }, timing);
}

/// y = W2·relu(W1·x + b1) + b2 for each row, in plain loops over the flat MlpSpec layout.
void plain_forward(const MlpSpec& spec, const std::vector<float>& params, const float* x,
                   std::int64_t batch, std::vector<float>& hidden, float* out) {
  const int in = spec.input_size;
  const int mid = spec.hidden_sizes.front();
  const int n_out = spec.output_size;
  const float* w1 = params.data();
  const float* b1 = w1 + static_cast<std::ptrdiff_t>(in) * mid;
  const float* w2 = b1 + mid;
  const float* b2 = w2 + static_cast<std::ptrdiff_t>(mid) * n_out;
  hidden.resize(static_cast<std::size_t>(mid));
  for (std::int64_t r = 0; r < batch; ++r) {
    const float* row = x + r * in;
    for (int h = 0; h < mid; ++h) {
      const float* w = w1 + static_cast<std::ptrdiff_t>(h) * in;
      // Eight independent partial sums so the compiler can vectorize without -ffast-math.
      float partial[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      int i = 0;
      for (; i + 8 <= in; i += 8) {
        for (int k = 0; k < 8; ++k) partial[k] += w[i + k] * row[i + k];
      }
      float sum = b1[h];
      for (; i < in; ++i) sum += w[i] * row[i];
      for (float p : partial) sum += p;
      hidden[static_cast<std::size_t>(h)] = sum > 0.0F ? sum : 0.0F;
    }
    for (int o = 0; o < n_out; ++o) {
      const float* w = w2 + static_cast<std::ptrdiff_t>(o) * mid;
      float sum = b2[o];
      for (int h = 0; h < mid; ++h) sum += w[h] * hidden[static_cast<std::size_t>(h)];
      out[r * n_out + o] = sum;
    }
  }
}

/// The figures of `tagflow bench learner` measured in a child process under `numerics: native`
/// (the pins this process runs with dropped before the child's libraries load); empty when the
/// child fails.
std::map<std::string, double> native_figures(bool quick) {
  const std::string json = "/tmp/tagflow_learner_bench_native_" + std::to_string(::getpid());
  const pid_t child = ::fork();
  if (child == 0) {
    numerics::apply_environment(numerics::Mode::native);
    const char* args[] = {"tagflow-torch", "bench",      "learner",
                          "--json",        json.c_str(), quick ? "--quick" : nullptr,
                          nullptr};
    if (std::freopen("/dev/null", "w", stdout) == nullptr) ::_exit(127);
    ::execv("/proc/self/exe", const_cast<char**>(args));
    ::_exit(127);
  }
  int status = 0;
  if (child < 0 || ::waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0) {
    return {};
  }
  std::map<std::string, double> figures;
  std::ifstream in(json);
  const nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
  ::unlink(json.c_str());
  if (!doc.is_object()) return figures;
  for (const nlohmann::json& r : doc.value("results", nlohmann::json::array())) {
    figures[r.value("name", "")] = r.value("value", 0.0);
  }
  return figures;
}

/// Adds native_figures() beside this run's (`native_` + name) and the pinned/native ratios.
void compare_with_native(BenchReport& report, bool quick) {
  const std::map<std::string, double> native = native_figures(quick);
  if (native.empty()) {
    std::cerr << "bench learner: the native-kernel run failed; no pinned/native figures\n";
    return;
  }
  const std::vector<BenchResult> pinned = report.results();
  for (const BenchResult& r : pinned) {
    const auto found = native.find(r.name);
    if (found == native.end()) continue;
    report.add("native_" + r.name, found->second, r.unit);
    if (r.unit == "us") {  // latency: lower is faster
      report.add_ratio("pinned/native " + r.name, "native_" + r.name, r.name);
    } else {
      report.add_ratio("pinned/native " + r.name, r.name, "native_" + r.name);
    }
  }
}

}  // namespace

BenchReport run_learner_bench(const BenchOptions& options) {
  const TimingOptions timing{options.quick ? 0.02 : 0.5, options.quick ? 1 : 3};
  BenchReport report("learner");
  const MlpSpec cartpole = learning::TrainConfig{}.dqn.network;
  const MlpSpec marl{1350, {64}, 2};

  for (std::int64_t batch : {64, 256}) {
    const std::string b = std::to_string(batch);
    report.add("update_cartpole_b" + b, updates_per_second(cartpole, batch, timing), "updates/s");
    report.add("update_marl_b" + b, updates_per_second(marl, batch, timing), "updates/s");
  }
  report.add_ratio("update_cartpole_b64/b256", "update_cartpole_b64", "update_cartpole_b256");
  report.add_ratio("update_marl_b64/b256", "update_marl_b64", "update_marl_b256");

  learning::PolicyNetwork policy(marl, 5);
  const std::vector<float> params = learning::init_mlp_parameters(marl, 5);
  const std::string script_path =
      "/tmp/tagflow_learner_bench_" + std::to_string(::getpid()) + ".pt";
  learning::export_torchscript(marl, params, script_path);
  learning::TorchScriptPolicy script(script_path);
  ::unlink(script_path.c_str());
  const std::vector<float> observations = random_floats(64 * 1350, 9);
  std::vector<float> scores(64 * 2);
  std::vector<float> hidden;
  for (std::int64_t batch : {1, 16, 64}) {
    const std::string b = std::to_string(batch);
    report.add("infer_marl_b" + b,
               1e6 * seconds_per_call(
                         [&] {
                           policy.scores(observations.data(), batch, scores.data());
                           do_not_optimize(scores.data());
                         },
                         timing),
               "us");
    report.add("infer_torchscript_marl_b" + b,
               1e6 * seconds_per_call(
                         [&] { do_not_optimize(script.scores(observations.data(), batch, 1350)); },
                         timing),
               "us");
    report.add("infer_plain_loop_marl_b" + b,
               1e6 * seconds_per_call(
                         [&] {
                           plain_forward(marl, params, observations.data(), batch, hidden,
                                         scores.data());
                           do_not_optimize(scores.data());
                         },
                         timing),
               "us");
    report.add_ratio("torchscript/flat_b" + b, "infer_torchscript_marl_b" + b, "infer_marl_b" + b);
    report.add_ratio("flat/plain_loop_b" + b, "infer_marl_b" + b, "infer_plain_loop_marl_b" + b);
  }
  if (numerics::current_mode() == numerics::Mode::portable && numerics::this_cpu().x86_64_v3) {
    compare_with_native(report, options.quick);
  }
  return report;
}

}  // namespace tagflow::bench
