#include "hosts/progress_output.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>

namespace tagflow::hosts {

std::string progress_text(const ProgressFigures& f, double env_steps_per_second,
                          double updates_per_second) {
  char evaluation[32] = "     -";
  if (!std::isnan(f.evaluation))
    std::snprintf(evaluation, sizeof evaluation, "%6.1f", f.evaluation);
  char text[256];
  std::snprintf(text, sizeof text,
                "%7.1fs  env steps %9lld (%8.0f/s)  updates %7lld (%6.0f/s)  return %6.1f"
                "  eval %s  weights v%llu",
                f.elapsed, static_cast<long long>(f.env_steps), env_steps_per_second,
                static_cast<long long>(f.updates), updates_per_second, f.mean_return, evaluation,
                static_cast<unsigned long long>(f.weights_version));
  std::string line = text;
  if (f.samplers >= 0) line += "  samplers " + std::to_string(f.samplers);
  return line;
}

ProgressOutput::ProgressOutput() : terminal_(::isatty(STDERR_FILENO) == 1) {}

void ProgressOutput::show(const ProgressFigures& figures) {
  const double dt = figures.elapsed - last_.elapsed;
  const auto rate = [dt](std::int64_t now, std::int64_t before) {
    return dt > 0 ? static_cast<double>(now - before) / dt : 0.0;
  };
  const std::string text = progress_text(figures, rate(figures.env_steps, last_.env_steps),
                                         rate(figures.updates, last_.updates));
  last_ = figures;
  if (terminal_) {
    std::fprintf(stderr, "\r%s\x1b[K", text.c_str());
    in_place_ = true;
  } else {
    if (figures.elapsed < next_line_) return;
    next_line_ = std::floor(figures.elapsed) + 1.0;
    std::fprintf(stderr, "%s\n", text.c_str());
  }
  std::fflush(stderr);
}

void ProgressOutput::finish() {
  if (in_place_) std::fputs("\n", stderr);
  in_place_ = false;
}

}  // namespace tagflow::hosts
