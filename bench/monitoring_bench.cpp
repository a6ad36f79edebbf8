// `tagflow bench monitoring`: what a metric costs on a node's hot path, and what a scrape costs.
//
// Updates through a cached prometheus-cpp reference (an atomic compare-and-swap on a double)
// against a plain relaxed std::atomic fetch_add as the ceiling; the same update when the series is
// looked up by labels every time (why nodes keep references); a latency histogram observation;
// and one scrape's worth of collection + text serialization for a sampler with 8 peers.
#include <atomic>
#include <cstdint>
#include <string>

#include "bench/benchmarks.hpp"
#include "bench/timing.hpp"
#include "monitoring/process_metrics.hpp"
#include "nodes/node_metrics.hpp"

namespace tagflow::bench {

BenchReport run_monitoring_bench(const BenchOptions& options) {
  using monitoring::Metric;
  const TimingOptions timing{options.quick ? 0.01 : 0.3, options.quick ? 1 : 3};
  constexpr int kBatch = 1000;  // updates per timed call, so the clock read does not dominate
  auto ns_per_update = [&](auto&& body) {
    return seconds_per_call(
               [&] {
                 for (int i = 0; i < kBatch; ++i) body(i);
               },
               timing) *
           1e9 / kBatch;
  };

  monitoring::ProcessMetrics metrics({"sampler-0", "sampler", "reactor"},
                                     nodes::node_families({nodes::family::kEnvSteps}));
  BenchReport report("monitoring");

  std::atomic<std::uint64_t> plain{0};
  report.add("atomic_fetch_add",
             ns_per_update([&](int) { plain.fetch_add(1, std::memory_order_relaxed); }), "ns/op");
  do_not_optimize(plain.load());

  prometheus::Counter& steps = metrics.counter(nodes::family::kEnvSteps);
  report.add("counter_increment", ns_per_update([&](int) { steps.Increment(); }), "ns/op");

  const monitoring::Labels peer{{"peer", "replay"}};
  report.add("counter_lookup_and_increment", ns_per_update([&](int) {
               metrics.counter(Metric::transport_messages_sent, peer).Increment();
             }),
             "ns/op");

  monitoring::ProcessMetrics coordinator({"coordinator", "coordinator", "reactor"});
  prometheus::Histogram& latency = coordinator.histogram(Metric::coordinator_grant_latency);
  const double samples[4] = {3e-5, 4e-4, 2e-3, 0.2};
  report.add("histogram_observe", ns_per_update([&](int i) { latency.Observe(samples[i & 3]); }),
             "ns/op");

  for (int p = 0; p < 8; ++p) {
    const monitoring::Labels labels{{"peer", "peer-" + std::to_string(p)}};
    for (Metric m : {Metric::transport_messages_sent, Metric::transport_messages_received,
                     Metric::transport_sent_bytes, Metric::transport_received_bytes}) {
      metrics.counter(m, labels).Increment(p);
    }
  }
  std::size_t text_bytes = 0;
  report.add("scrape_text_sampler_8_peers",
             seconds_per_call(
                 [&] {
                   const std::string text = metrics.text();
                   text_bytes = text.size();
                   do_not_optimize(text.data());
                 },
                 timing) *
                 1e6,
             "us/scrape");
  report.add("scrape_text_size", static_cast<double>(text_bytes), "bytes");

  // Oriented so that larger means the subject (the cached prometheus-cpp counter) does better.
  report.add_ratio("increment: atomic/counter", "atomic_fetch_add", "counter_increment");
  report.add_ratio("increment: lookup/cached", "counter_lookup_and_increment", "counter_increment");
  report.add_ratio("update: histogram/counter", "histogram_observe", "counter_increment");
  return report;
}

}  // namespace tagflow::bench
