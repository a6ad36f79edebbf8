#include "common/numerics.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <stdexcept>

namespace tagflow::numerics {
namespace {

std::string env_or_empty(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

/// GLIBC_TUNABLES with the libm pin appended (once).
std::string tunables_with_libm_pin() {
  const std::string current = env_or_empty("GLIBC_TUNABLES");
  if (current.find(kLibmTunable) != std::string::npos) return current;
  return current.empty() ? std::string(kLibmTunable) : current + ":" + kLibmTunable;
}

Cpu detect_cpu() {
  Cpu cpu;
#if defined(__x86_64__)
  __builtin_cpu_init();
  cpu.x86_64_v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  cpu.model = "x86-64";
#elif defined(__aarch64__)
  cpu.model = "aarch64";
#else
  cpu.model = "unknown architecture";
#endif
  std::ifstream info("/proc/cpuinfo");
  std::string line;
  while (std::getline(info, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) break;
    const auto start = line.find_first_not_of(" \t", colon + 1);
    if (start != std::string::npos) cpu.model = line.substr(start);
    break;
  }
  return cpu;
}

struct TorchKernels {
  std::mutex mutex;
  std::string blas, blas_core, aten_capability;
};

TorchKernels& torch_kernels() {
  static TorchKernels kernels;
  return kernels;
}

}  // namespace

const char* to_string(Mode mode) { return mode == Mode::portable ? "portable" : "native"; }

std::optional<Mode> parse_mode(const std::string& text) {
  if (text == "portable") return Mode::portable;
  if (text == "native") return Mode::native;
  return std::nullopt;
}

const Cpu& this_cpu() {
  static const Cpu cpu = detect_cpu();
  return cpu;
}

std::vector<std::pair<std::string, std::string>> variables_for(Mode mode, const Cpu& cpu) {
  std::vector<std::pair<std::string, std::string>> variables;
  if (mode == Mode::portable && cpu.x86_64_v3) {
    variables = {
        {"OPENBLAS_CORETYPE", "Haswell"},
        {"ATEN_CPU_CAPABILITY", "avx2"},
        {"ONEDNN_MAX_CPU_ISA", "AVX2"},
        {"DNNL_MAX_CPU_ISA", "AVX2"},
        {"GLIBC_TUNABLES", tunables_with_libm_pin()},
    };
  }
  variables.emplace_back(kMarker, to_string(mode));
  return variables;
}

bool environment_matches(Mode mode) {
  for (const auto& [name, value] : variables_for(mode, this_cpu())) {
    if (env_or_empty(name.c_str()) != value) return false;
  }
  return true;
}

void apply_environment(Mode mode) {
  // A native run under an environment a portable run pinned (a cluster started from another's
  // process, say) drops those pins; variables set by anyone else stay.
  if (mode == Mode::native && env_or_empty(kMarker) == to_string(Mode::portable)) {
    for (const auto& [name, value] : variables_for(Mode::portable, this_cpu())) {
      if (name == "GLIBC_TUNABLES") {
        std::string tunables = env_or_empty("GLIBC_TUNABLES");
        const auto at = tunables.find(kLibmTunable);
        if (at != std::string::npos) tunables.erase(at, std::strlen(kLibmTunable));
        while (!tunables.empty() && tunables.back() == ':') tunables.pop_back();
        if (tunables.empty()) {
          ::unsetenv("GLIBC_TUNABLES");
        } else {
          ::setenv("GLIBC_TUNABLES", tunables.c_str(), 1);
        }
      } else if (name != kMarker) {
        ::unsetenv(name.c_str());
      }
    }
  }
  for (const auto& [name, value] : variables_for(mode, this_cpu())) {
    ::setenv(name.c_str(), value.c_str(), 1);
  }
}

void pin_or_reexec(Mode mode, char** argv) {
  if (environment_matches(mode)) return;
  apply_environment(mode);
  ::execv("/proc/self/exe", argv);
  throw std::runtime_error(std::string("cannot re-execute this program with the pinned numeric "
                                       "kernels (numerics: portable): ") +
                           std::strerror(errno));
}

Mode current_mode() { return parse_mode(env_or_empty(kMarker)).value_or(Mode::portable); }

std::string unportable_cpu_line(const Cpu& cpu) {
  if (cpu.x86_64_v3) return "";
  return "numerics: this CPU (" + cpu.model +
         ") is not x86-64 with AVX2 and FMA, so the portable kernels cannot run here: its "
         "libraries choose their own, and digests will differ from those of x86-64-v3 machines";
}

void record_torch_kernels(std::string blas, std::string blas_core, std::string aten_capability) {
  TorchKernels& kernels = torch_kernels();
  const std::lock_guard<std::mutex> lock(kernels.mutex);
  kernels.blas = std::move(blas);
  kernels.blas_core = std::move(blas_core);
  kernels.aten_capability = std::move(aten_capability);
}

Report process_report() {
  const Cpu& cpu = this_cpu();
  const Mode mode = current_mode();
  Report report;
  report.mode = to_string(mode);
  report.cpu = cpu.model;
  // Pinned only when the environment really holds the pins (a process started some other way,
  // a test binary say, reports what it ran with).
  report.portable = mode == Mode::portable && cpu.x86_64_v3 && environment_matches(mode);
  report.libm =
      env_or_empty("GLIBC_TUNABLES").find(kLibmTunable) != std::string::npos ? "plain" : "cpu";
  TorchKernels& kernels = torch_kernels();
  const std::lock_guard<std::mutex> lock(kernels.mutex);
  report.blas = kernels.blas;
  report.blas_core = kernels.blas_core;
  report.aten_capability = kernels.aten_capability;
  // The pinned products are OpenBLAS's: another BLAS (the reference one, say) gives other bits.
  if (!report.blas.empty() && report.blas_core.empty()) report.portable = false;
  return report;
}

std::string describe(const Report& report) {
  std::string kernels;
  const auto add = [&kernels](const std::string& part) {
    if (part.empty()) return;
    kernels += kernels.empty() ? part : ", " + part;
  };
  if (!report.blas_core.empty()) add("OpenBLAS " + report.blas_core);
  if (!report.blas.empty() && report.blas_core.empty()) add("BLAS " + report.blas);
  if (!report.aten_capability.empty()) add("ATen " + report.aten_capability);
  add(report.libm == "plain" ? "plain libm" : "libm for this CPU");
  if (report.portable) return "portable (x86-64-v3: " + kernels + ")";
  return report.mode + ": digest specific to " + report.cpu + " (" + kernels + ")";
}

Report merge(const std::vector<Report>& reports) {
  if (reports.empty()) return process_report();
  Report merged = reports.front();
  const auto join = [](std::string& into, const std::string& value) {
    if (value.empty() || into == value) return;
    if (into.empty()) {
      into = value;
      return;
    }
    // Keep each distinct value once.
    const std::string separator = " / ";
    std::size_t start = 0;
    while (start <= into.size()) {
      const std::size_t end = std::min(into.find(separator, start), into.size());
      if (into.compare(start, end - start, value) == 0 && end - start == value.size()) return;
      start = end + separator.size();
    }
    into += separator + value;
  };
  for (std::size_t i = 1; i < reports.size(); ++i) {
    const Report& r = reports[i];
    join(merged.mode, r.mode);
    join(merged.cpu, r.cpu);
    join(merged.libm, r.libm);
    join(merged.blas, r.blas);
    join(merged.blas_core, r.blas_core);
    join(merged.aten_capability, r.aten_capability);
    merged.portable = merged.portable && r.portable;
  }
  return merged;
}

}  // namespace tagflow::numerics
