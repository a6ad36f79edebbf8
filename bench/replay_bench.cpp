// `tagflow bench replay`: the prioritized-replay sum tree, K-ary (this project's SumTree: K = 16,
// float running sums, one cache line per sibling group) against the textbook binary sum tree, in
// the same run.
//
// For 10^4, 10^6 and 10^7 leaves (--quick: 10^4 and 10^5), with 1 and 2 threads:
//   insert: fill every leaf in order (a new table's slots fill in order) in batches of 256
//     through set_batch, as Table's lazy writing hands them over: the K-ary tree propagates each
//     batch's sums once; the binary tree, the textbook baseline, propagates every leaf on its own
//     path (its set_batch is a loop of set), M items/s;
//   sample: stratified batches of 256, M sampled items/s;
//   update: batches of 256 priorities at random leaves, M updates/s.
// With 2 threads both threads work on one tree: samplers share a reader lock (descents only read),
// inserts and updates take the writer lock once per batch of 256 and so serialize; the figures
// are the two threads' total. Single-thread figures are per CPU-second of the measuring thread
// (robust to other processes on a shared machine); two-thread figures per wall-clock second, so
// they suffer from any other load (the report's load_average figure shows how much). Ratios read
// `sample_1e6: kary/binary`. A layout section compares K and float/double at 10^6 leaves (sample
// and update), which is how K = 16 / float was chosen, and a table section measures Table insert
// and sample of CartPole-sized transitions: sampling from 1 and 2 threads (`table_sample_1e6:
// 2t/1t`, wall clock, so it also shows the load of the machine), and a mixed run where 2 threads
// each insert a transition, sample a batch of 256 and send its priorities back, against the same
// loop on 1 thread (`table_mixed_1e6: 2t/1t`, items inserted + sampled + updated per second).
// `ceiling_sample_1e6: 2t/1t` is what two threads gain at that moment on lock-free tree descents
// alone: on a machine whose second core is busy it is near 1, and the table's ratios cannot
// exceed it.
#include <time.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "bench/benchmarks.hpp"
#include "bench/timing.hpp"
#include "rl/replay/binary_sum_tree.hpp"
#include "rl/replay/sum_tree.hpp"
#include "rl/replay/table.hpp"

namespace tagflow::bench {
namespace {

using replay::BinarySumTree;
using replay::KarySumTree;

constexpr std::size_t kSampleBatch = 256;

struct SplitMix {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  double priority() { return 0.1 + static_cast<double>(next() % 1000) * 0.01; }
};

// Per-thread scratch for batched calls.
struct ReplayWorker {
  explicit ReplayWorker(std::uint64_t seed)
      : rng{seed}, uniforms(kSampleBatch), leaves(kSampleBatch), values(kSampleBatch) {}
  SplitMix rng;
  std::vector<double> uniforms;
  std::vector<std::size_t> leaves;
  std::vector<double> values;
};

template <class Tree>
void sample_batch(const Tree& tree, ReplayWorker& w) {
  for (double& u : w.uniforms) u = w.rng.unit();
  tree.sample_stratified(w.uniforms.data(), kSampleBatch, w.leaves.data());
  do_not_optimize(w.leaves[kSampleBatch - 1]);
}

template <class Tree>
void update_batch(Tree& tree, ReplayWorker& w, std::size_t size) {
  for (std::size_t i = 0; i < kSampleBatch; ++i) {
    w.leaves[i] = w.rng.next() % size;
    w.values[i] = w.rng.priority();
  }
  tree.set_batch(w.leaves.data(), w.values.data(), kSampleBatch);
}

// Seconds since `start_wall` / `start_cpu` on the clock the thread count calls for (wall time
// always with `wall`): one thread's figures use its CPU time (timing.hpp), so that other
// processes on a shared machine do not slow them down; two threads' use wall time (a thread
// blocked on the writer lock uses no CPU time, and the figure must show that serialization).
double elapsed(int threads, bool wall, std::chrono::steady_clock::time_point start_wall,
               double start_cpu) {
  return threads == 1 && !wall ? thread_cpu_seconds() - start_cpu : seconds_since(start_wall);
}

// Runs `body(thread, worker)` on `threads` threads for about `seconds`; returns calls per second
// summed over threads (best of `trials`). `wall`: wall time for one thread too (Table's threads
// may block on each other, and a 2t/1t ratio must compare the same clock).
template <class Body>
double calls_per_second(int threads, const TimingOptions& timing, Body body, bool wall = false) {
  double best = 0.0;
  for (int trial = 0; trial < timing.trials; ++trial) {
    std::atomic<bool> go{false};
    std::vector<std::int64_t> calls(static_cast<std::size_t>(threads), 0);
    std::vector<double> seconds(static_cast<std::size_t>(threads), 0.0);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        ReplayWorker worker(1000 + static_cast<std::uint64_t>(t) * 7919 +
                            static_cast<std::uint64_t>(trial));
        while (!go.load(std::memory_order_acquire)) {
        }
        const auto start = std::chrono::steady_clock::now();
        const double start_cpu = thread_cpu_seconds();
        std::int64_t n = 0;
        do {
          body(t, worker);
          ++n;
        } while (elapsed(threads, wall, start, start_cpu) < timing.min_seconds_per_trial);
        calls[static_cast<std::size_t>(t)] = n;
        seconds[static_cast<std::size_t>(t)] = elapsed(threads, wall, start, start_cpu);
      });
    }
    go.store(true, std::memory_order_release);
    for (std::thread& thread : pool) thread.join();
    double rate = 0.0;
    for (int t = 0; t < threads; ++t) {
      rate += static_cast<double>(calls[static_cast<std::size_t>(t)]) /
              seconds[static_cast<std::size_t>(t)];
    }
    best = std::max(best, rate);
  }
  return best;
}

// Fills a fresh tree of `size` leaves in order with `threads` threads (each its own interleaved
// batches of 256 leaves, under the writer lock), and fills it again, as a full table's ring
// overwrites its slots, until 10^6 leaves were written (one pass at 10^6 and above), so that
// thread start-up does not dominate small trees; M inserts/s.
template <class Tree>
double insert_rate(std::size_t size, int threads) {
  Tree tree(size);
  std::shared_mutex lock;
  const std::size_t batches = (size + kSampleBatch - 1) / kSampleBatch;
  const std::size_t passes = std::max<std::size_t>(1, 1'000'000 / size);
  const auto start = std::chrono::steady_clock::now();
  double cpu_seconds = 0.0;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      const double start_cpu = thread_cpu_seconds();
      SplitMix rng{static_cast<std::uint64_t>(t) + 1};
      std::vector<std::size_t> leaves(kSampleBatch);
      std::vector<double> values(kSampleBatch);
      for (std::size_t b = static_cast<std::size_t>(t); b < batches * passes;
           b += static_cast<std::size_t>(threads)) {
        const std::size_t first = (b % batches) * kSampleBatch;
        const std::size_t end = std::min(size, first + kSampleBatch);
        const std::size_t count = end - first;
        for (std::size_t i = 0; i < count; ++i) {
          leaves[i] = first + i;
          values[i] = rng.priority();
        }
        std::unique_lock<std::shared_mutex> guard(lock);
        tree.set_batch(leaves.data(), values.data(), count);
      }
      if (threads == 1) cpu_seconds = thread_cpu_seconds() - start_cpu;
    });
  }
  for (std::thread& thread : pool) thread.join();
  const double seconds = threads == 1 ? cpu_seconds : seconds_since(start);
  do_not_optimize(tree.total());
  return static_cast<double>(size * passes) / seconds / 1e6;
}

template <class Tree>
std::unique_ptr<Tree> filled(std::size_t size) {
  auto tree = std::make_unique<Tree>(size);
  SplitMix rng{99};
  for (std::size_t leaf = 0; leaf < size; ++leaf) tree->set(leaf, rng.priority());
  return tree;
}

template <class Tree>
double sample_rate(const Tree& tree, int threads, const TimingOptions& timing) {
  std::shared_mutex lock;
  return calls_per_second(threads, timing,
                          [&](int, ReplayWorker& w) {
                            std::shared_lock<std::shared_mutex> guard(lock);
                            sample_batch(tree, w);
                          }) *
         kSampleBatch / 1e6;
}

template <class Tree>
double update_rate(Tree& tree, int threads, const TimingOptions& timing) {
  std::shared_mutex lock;
  return calls_per_second(threads, timing,
                          [&](int, ReplayWorker& w) {
                            std::unique_lock<std::shared_mutex> guard(lock);
                            update_batch(tree, w, tree.capacity());
                          }) *
         kSampleBatch / 1e6;
}

std::string size_label(std::size_t size) {
  int exponent = 0;
  for (std::size_t s = size; s >= 10; s /= 10) ++exponent;
  return "1e" + std::to_string(exponent);
}

template <class Tree>
void measure_tree(BenchReport& report, const std::string& tree_name, std::size_t size,
                  const TimingOptions& timing) {
  const std::string at = size_label(size);
  for (int threads : {1, 2}) {
    const std::string suffix = "_" + tree_name + "_" + std::to_string(threads) + "t";
    report.add("insert_" + at + suffix, insert_rate<Tree>(size, threads), "M items/s");
  }
  auto tree = filled<Tree>(size);
  if (tree_name == "kary") {
    report.add("memory_" + at + "_kary",
               static_cast<double>(tree->memory_bytes()) / static_cast<double>(size), "B/item");
  } else {
    report.add("memory_" + at + "_binary",
               static_cast<double>(tree->memory_bytes()) / static_cast<double>(size), "B/item");
  }
  for (int threads : {1, 2}) {
    const std::string suffix = "_" + tree_name + "_" + std::to_string(threads) + "t";
    report.add("sample_" + at + suffix, sample_rate(*tree, threads, timing), "M items/s");
    report.add("update_" + at + suffix, update_rate(*tree, threads, timing), "M items/s");
  }
}

template <int K, class Prefix>
void measure_layout(BenchReport& report, const std::string& name, std::size_t size,
                    const TimingOptions& timing) {
  auto tree = filled<KarySumTree<K, Prefix>>(size);
  const std::string at = size_label(size);
  report.add("layout_sample_" + at + "_" + name, sample_rate(*tree, 1, timing), "M items/s");
  report.add("layout_update_" + at + "_" + name, update_rate(*tree, 1, timing), "M items/s");
}

// Table path: CartPole-sized transitions (4 float32 observation, int64 action), prioritized.
void measure_table(BenchReport& report, std::size_t size, const TimingOptions& timing) {
  replay::TableConfig config;
  config.spec.observation = replay::FieldSpec{replay::DType::kFloat32, {4}};
  config.spec.action = replay::FieldSpec{replay::DType::kInt64, {}};
  config.max_items = size;
  config.selector = replay::SelectorKind::kPrioritized;
  replay::Table table(config);
  std::vector<float> observation = {0.1F, 0.2F, 0.3F, 0.4F};
  std::vector<std::int64_t> action = {1};
  replay::Transition transition{replay::bytes_of(observation), replay::bytes_of(action), 1.0F,
                                false, replay::bytes_of(observation)};
  SplitMix rng{5};
  const double start = thread_cpu_seconds();
  for (std::size_t i = 0; i < size; ++i) (void)table.insert(transition, rng.priority());
  const std::string at = size_label(size);
  report.add("table_insert_" + at, static_cast<double>(size) / (thread_cpu_seconds() - start) / 1e6,
             "M items/s");
  for (int threads : {1, 2}) {
    const double rate = calls_per_second(
        threads, timing,
        [&](int, ReplayWorker&) {
          thread_local replay::SampledBatch batch;
          (void)table.sample({kSampleBatch, 0.4}, batch);
          do_not_optimize(batch.keys[0]);
        },
        true);
    report.add("table_sample_" + at + "_" + std::to_string(threads) + "t",
               rate * kSampleBatch / 1e6, "M items/s");
  }
  // The ceiling of 2t/1t on this machine now: descents of a tree of the same size that the two
  // threads share with no lock at all (wall clock, like the table's figures).
  const auto tree = filled<replay::SumTree>(size);
  for (int threads : {1, 2}) {
    const double rate = calls_per_second(
        threads, timing, [&](int, ReplayWorker& w) { sample_batch(*tree, w); }, true);
    report.add("ceiling_sample_" + at + "_" + std::to_string(threads) + "t",
               rate * kSampleBatch / 1e6, "M items/s");
  }
  // Mixed: per call one insert (evicting the oldest item), one sample, one priority update.
  for (int threads : {1, 2}) {
    const double rate = calls_per_second(
        threads, timing,
        [&](int, ReplayWorker& w) {
          thread_local replay::SampledBatch batch;
          thread_local std::vector<double> priorities(kSampleBatch);
          (void)table.insert(transition, w.rng.priority());
          (void)table.sample({kSampleBatch, 0.4}, batch);
          for (double& p : priorities) p = w.rng.priority();
          (void)table.update_priorities(batch.keys, priorities);
        },
        true);
    report.add("table_mixed_" + at + "_" + std::to_string(threads) + "t",
               rate * (1 + 2 * kSampleBatch) / 1e6, "M items/s");
  }
}

}  // namespace

BenchReport run_replay_bench(const BenchOptions& options) {
  const TimingOptions timing{options.quick ? 0.02 : 0.25, options.quick ? 1 : 3};
  const std::vector<std::size_t> sizes =
      options.quick ? std::vector<std::size_t>{10'000, 100'000}
                    : std::vector<std::size_t>{10'000, 1'000'000, 10'000'000};
  BenchReport report("replay");
  double load = 0.0;
  if (std::FILE* file = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(file, "%lf", &load) != 1) load = 0.0;
    std::fclose(file);
  }
  report.add("load_average_1min", load, "runnable");
  for (std::size_t size : sizes) {
    measure_tree<replay::SumTree>(report, "kary", size, timing);
    measure_tree<BinarySumTree>(report, "binary", size, timing);
    const std::string at = size_label(size);
    for (const char* op : {"insert", "sample", "update"}) {
      for (const char* threads : {"1t", "2t"}) {
        const std::string base = std::string(op) + "_" + at;
        const std::string label =
            base + (std::string(threads) == "1t" ? "" : "_2t") + ": kary/binary";
        report.add_ratio(label, base + "_kary_" + threads, base + "_binary_" + threads);
      }
    }
  }
  const std::size_t layout_size = options.quick ? 10'000 : 1'000'000;
  measure_layout<4, double>(report, "k4_double", layout_size, timing);
  measure_layout<8, double>(report, "k8_double", layout_size, timing);
  measure_layout<16, float>(report, "k16_float", layout_size, timing);
  measure_layout<16, double>(report, "k16_double", layout_size, timing);
  measure_layout<32, float>(report, "k32_float", layout_size, timing);
  const std::string at = size_label(layout_size);
  report.add_ratio("layout_sample_" + at + ": k16_float/k8_double",
                   "layout_sample_" + at + "_k16_float", "layout_sample_" + at + "_k8_double");
  measure_table(report, options.quick ? 10'000 : 1'000'000, timing);
  const std::string table_at = size_label(options.quick ? 10'000 : 1'000'000);
  report.add_ratio("table_sample_" + table_at + ": 2t/1t", "table_sample_" + table_at + "_2t",
                   "table_sample_" + table_at + "_1t");
  report.add_ratio("ceiling_sample_" + table_at + ": 2t/1t", "ceiling_sample_" + table_at + "_2t",
                   "ceiling_sample_" + table_at + "_1t");
  report.add_ratio("table_mixed_" + table_at + ": 2t/1t", "table_mixed_" + table_at + "_2t",
                   "table_mixed_" + table_at + "_1t");
  return report;
}

}  // namespace tagflow::bench
