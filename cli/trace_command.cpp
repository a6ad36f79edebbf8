// `tagflow trace summary LOG_DIR [--top N] [--svg FILE]`, `tagflow trace merge LOG_DIR` and
// `tagflow diff RUN_A RUN_B` (tracing/README.md): reading the runs `tagflow up` traced.
// Exit codes: 0 done (diff: the runs match); 1 diff: the runs differ; 2 the run was not traced,
// has no value logs, or a file cannot be read or written (one line on stderr names it).
#include <filesystem>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "common/atomic_file.hpp"
#include "tracing/run_diff.hpp"
#include "tracing/trace_merge.hpp"
#include "tracing/trace_summary.hpp"

namespace tagflow::cli {
namespace {

struct TraceOptions {
  std::string log_dir;
  std::size_t top = 5;
  std::string svg;
};

void run_summary(const TraceOptions& o) {
  try {
    const tracing::TraceSummary summary =
        tracing::summarize_trace(tracing::read_trace_dir(o.log_dir), o.top);
    std::cout << summary.table();
    const std::string svg =
        o.svg.empty() ? (std::filesystem::path(o.log_dir) / "trace-summary.svg").string() : o.svg;
    // Written beside the path and renamed over it; a device or a directory there is refused.
    write_file_atomically(svg, summary.svg("Where the time went: " +
                                           std::filesystem::path(o.log_dir).filename().string()));
    std::cout << "\nchart: " << svg << "\n";
  } catch (const std::exception& e) {
    fail_command("trace summary", e.what(), kExitBadFile);
  }
}

void run_merge(const TraceOptions& o) {
  try {
    const tracing::MergeReport r = tracing::merge_traces(o.log_dir);
    std::cout << r.path << ": " << r.processes << " processes, " << r.threads << " threads, "
              << r.events << " events, " << r.data_flows << " data messages and " << r.control_flows
              << " control messages with both ends, " << r.unmatched << " with one end only, "
              << r.dropped << " events dropped by the rings; clocks "
              << "aligned within " << r.max_clock_error_ns << " ns\n";
  } catch (const std::exception& e) {
    fail_command("trace merge", e.what(), kExitBadFile);
  }
}

}  // namespace

void add_trace_command(CLI::App& app) {
  auto* trace = app.add_subcommand(
      "trace", "Read a traced run (`trace:` in the cluster file, or tagflow up --trace)");
  trace->require_subcommand(1);
  auto o = std::make_shared<TraceOptions>();
  auto* summary = trace->add_subcommand(
      "summary",
      "Per federate, where the wall time went; the slowest tags and the waits that made them "
      "slow; a chart (SVG)");
  summary->add_option("log_dir", o->log_dir, "The run's log directory")->required();
  summary->add_option("--top", o->top, "How many of the slowest tags to explain (default 5)")
      ->check(CLI::Range(0, 1000000));
  summary->add_option("--svg", o->svg, "Write the chart here (default LOG_DIR/trace-summary.svg)");
  summary->callback([o] { run_summary(*o); });
  auto* merge = trace->add_subcommand(
      "merge", "Merge the processes' traces into LOG_DIR/trace.json again (Chrome trace format)");
  merge->add_option("log_dir", o->log_dir, "The run's log directory")->required();
  merge->callback([o] { run_merge(*o); });
}

void add_diff_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "diff",
      "The first data message two runs sent differently (both recorded with "
      "`trace: {digests: true}`): tag, connection and both values. Exit 0: they match; 1: they "
      "differ; 2: a run directory is missing or no directory, a run has no value logs, a file "
      "cannot be read, or a bad argument");
  auto a = std::make_shared<std::string>();
  auto b = std::make_shared<std::string>();
  command->add_option("run_a", *a, "The first run's log directory")->required();
  command->add_option("run_b", *b, "The second run's log directory")->required();
  command->callback([a, b] {
    tracing::DiffResult result;
    try {
      result = tracing::diff_runs(*a, *b);
    } catch (const std::exception& e) {
      fail_command("diff", e.what(), kExitBadFile);
    }
    std::cout << result.text();
    if (result.difference) throw CLI::RuntimeError(1);
  });
}

}  // namespace tagflow::cli
