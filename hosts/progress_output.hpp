// ProgressOutput: the live line of a one-process run (`tagflow up FILE --placement single`, reactor
// or actor mode) on stderr, following the rule of `tagflow up`'s own line (docs/clusters.md): on a
// terminal it is rewritten in place at every show(); into a file or a pipe it is a new line once
// a second, so that a log holds one readable line per second instead of carriage returns.
// Not thread-safe: one printing thread.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

namespace tagflow::hosts {

/// What the line shows, summed over the run's replicas (the rates come from ProgressOutput).
struct ProgressFigures {
  double elapsed = 0.0;  // seconds since the run started
  std::int64_t env_steps = 0;
  std::int64_t updates = 0;
  double mean_return = 0.0;  // the samplers' recent mean return
  // The latest evaluation of the learner or an evaluator; NaN (shown "-") before the first.
  double evaluation = std::numeric_limits<double>::quiet_NaN();
  std::uint64_t weights_version = 0;
  int samplers = -1;  // samplers still running (actor mode); -1: not shown
};

/// The line's text, without a line break.
[[nodiscard]] std::string progress_text(const ProgressFigures& figures, double env_steps_per_second,
                                        double updates_per_second);

class ProgressOutput {
 public:
  /// `terminal`: whether stderr is one (the default looks).
  ProgressOutput();
  explicit ProgressOutput(bool terminal) : terminal_(terminal) {}
  /// Shows `figures`, with the env steps and updates per second since the previous show(): in
  /// place on a terminal; else as a new line, at most once a second.
  void show(const ProgressFigures& figures);
  /// Ends a line rewritten in place (call once, after the last show()).
  void finish();

 private:
  bool terminal_;
  bool in_place_ = false;   // an in-place line waits for its line break
  double next_line_ = 0.0;  // not a terminal: the elapsed seconds of the next line
  ProgressFigures last_;    // the previous show()'s, for the rates
};

}  // namespace tagflow::hosts
