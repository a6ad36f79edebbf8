// Which numeric kernels a process computes with, so that a digest means the same on every machine.
//
// The float results a digest depends on come from code that the libraries choose for the CPU
// while they load, before main() runs:
//   - OpenBLAS's core type (read from OPENBLAS_CORETYPE, else detected): the learner's products;
//   - ATen's vector kernels (ATEN_CPU_CAPABILITY: default, avx2, avx512): element-wise math,
//     reductions, the vectorized exp/log/tanh;
//   - oneDNN's instruction set (ONEDNN_MAX_CPU_ISA), where LibTorch calls it;
//   - glibc's libm variants of sin, cos, exp, log, pow, ... (an FMA variant where the CPU has
//     FMA, a plain one otherwise; they differ in the last bit for some inputs), chosen from the
//     CPU features glibc sees (GLIBC_TUNABLES=glibc.cpu.hwcaps=-FMA,-FMA4 hides FMA).
// `numerics: portable` (the default of every cluster file, and of `tagflow train`) pins all four
// to one choice that every x86-64-v3 CPU (AVX2 and FMA) runs: OpenBLAS Haswell, ATen avx2,
// oneDNN AVX2, the plain libm. `numerics: native` leaves the libraries to detect the CPU (the
// fastest kernels; the digest is then specific to the CPU model). tagflow's own code is built
// for plain x86-64 with -ffp-contract=off, so it gives the same bits on every CPU; intra-op and
// BLAS thread counts are set by the program (one, unless `tagflow train --threads`), never
// derived from the machine.
//
// Because the libraries read these settings at load time, a process brings its environment to
// the pinned one and then re-executes itself (pin_or_reexec); a launcher's children inherit the
// environment and start pinned. TAGFLOW_NUMERICS (portable or native) marks an environment that
// was set up this way.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tagflow::numerics {

enum class Mode { portable, native };

[[nodiscard]] const char* to_string(Mode mode);
/// "portable" or "native"; nullopt for anything else.
[[nodiscard]] std::optional<Mode> parse_mode(const std::string& text);

/// The variable that marks a pinned environment.
inline constexpr const char* kMarker = "TAGFLOW_NUMERICS";
/// The libm pin inside GLIBC_TUNABLES.
inline constexpr const char* kLibmTunable = "glibc.cpu.hwcaps=-FMA,-FMA4";

/// What this process's CPU is.
struct Cpu {
  std::string model;       // /proc/cpuinfo's "model name" (or the architecture)
  bool x86_64_v3 = false;  // x86-64 with AVX2 and FMA: the CPUs portable mode pins for
};

[[nodiscard]] const Cpu& this_cpu();

/// The variables `mode` sets on `cpu` (portable on an x86-64-v3 CPU: the four pins and the
/// marker; otherwise the marker only, since the pinned kernels would not run there). The
/// GLIBC_TUNABLES value keeps what the environment already had, with the libm pin appended.
[[nodiscard]] std::vector<std::pair<std::string, std::string>> variables_for(Mode mode,
                                                                             const Cpu& cpu);

/// True when this process's environment already holds variables_for(mode, this_cpu()).
[[nodiscard]] bool environment_matches(Mode mode);

/// Sets variables_for(mode, this_cpu()) in this process's environment (children inherit them).
void apply_environment(Mode mode);

/// At the top of main(): when the environment does not match `mode`, sets it and replaces the
/// process with the same program and arguments (execv of /proc/self/exe), so that the libraries
/// load under it; returns when it already matches. Throws std::runtime_error when the exec fails.
void pin_or_reexec(Mode mode, char** argv);

/// The mode this process runs under: TAGFLOW_NUMERICS when set (and valid), else portable.
[[nodiscard]] Mode current_mode();

/// The one-line warning of a CPU that cannot honour portable mode, or "" on an x86-64-v3 CPU.
[[nodiscard]] std::string unportable_cpu_line(const Cpu& cpu);

/// What one process computed with: in its result (nodes/kind/process_result.hpp) and, merged over
/// the processes, in the run summary.
struct Report {
  std::string mode;             // "portable" | "native"
  bool portable = false;        // portable mode honoured: the digest is the x86-64-v3 one
  std::string cpu;              // CPU model
  std::string libm;             // "plain" (FMA variants hidden) | "cpu" (glibc's choice)
  std::string blas;             // LibTorch processes: the BLAS library mapped, else ""
  std::string blas_core;        // ... OpenBLAS's core type (openblas_get_corename), else ""
  std::string aten_capability;  // ... ATen's kernels: default, avx2 or avx512, else ""
};

/// This process's report; LibTorch processes add their kernels with record_torch_kernels().
[[nodiscard]] Report process_report();

/// Called once by processes that load LibTorch, with what the libraries chose.
void record_torch_kernels(std::string blas, std::string blas_core, std::string aten_capability);

/// One line for the start of a run and the summary, e.g. "portable (x86-64-v3: OpenBLAS
/// Haswell, ATen avx2, plain libm)" or "native: digest specific to AMD EPYC (...)".
[[nodiscard]] std::string describe(const Report& report);

/// The reports of several processes as one: fields that differ are joined with " / ", and
/// `portable` holds only if it holds for all. Empty input gives this process's report.
[[nodiscard]] Report merge(const std::vector<Report>& reports);

}  // namespace tagflow::numerics
