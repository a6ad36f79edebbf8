// Process-wide LibTorch settings shared by the tagflow-torch commands.
#include <ATen/Parallel.h>
#include <dlfcn.h>

#include <cstdlib>
#include <iostream>

#include "common/numerics.hpp"

#include "cli/torch_commands.hpp"
#include "cli/torch_probe.hpp"

namespace tagflow::cli {

void set_torch_threads(int threads) {
  at::set_num_threads(threads);
  // OpenBLAS keeps its own thread pool, which at::set_num_threads does not size. Look the setter
  // up at run time: the BLAS is chosen by the system (Debian's alternatives), not at link time.
  using SetThreads = void (*)(int);
  if (void* symbol = ::dlsym(RTLD_DEFAULT, "openblas_set_num_threads")) {
    reinterpret_cast<SetThreads>(symbol)(threads);
  }
}

namespace {

/// The kernels ATen dispatches to, by its own rule (LibTorch does not export its answer):
/// ATEN_CPU_CAPABILITY when it names one, else avx512 on CPUs with AVX-512 F/BW/VL/DQ and FMA,
/// avx2 on CPUs with AVX2 and FMA, else default.
std::string aten_capability() {
  const char* forced = std::getenv("ATEN_CPU_CAPABILITY");
  if (forced != nullptr) {
    const std::string value = forced;
    if (value == "default" || value == "avx2" || value == "avx512") return value;
  }
#if defined(__x86_64__)
  __builtin_cpu_init();
  const bool fma = __builtin_cpu_supports("fma");
  if (fma && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq")) {
    return "avx512";
  }
  if (fma && __builtin_cpu_supports("avx2")) return "avx2";
#endif
  return "default";
}

}  // namespace

void record_torch_numerics() {
  const std::string library = mapped_blas_library();
  std::string core;
  using CoreName = char* (*)();
  if (void* symbol = ::dlsym(RTLD_DEFAULT, "openblas_get_corename")) {
    if (const char* name = reinterpret_cast<CoreName>(symbol)()) core = name;
  }
  numerics::record_torch_kernels(library, core, aten_capability());
  // Portable mode promises OpenBLAS's pinned kernels; say so once per process when another BLAS
  // (Debian's alternatives decide which libblas.so.3 loads) takes their place.
  if (numerics::current_mode() == numerics::Mode::portable && core.empty() &&
      numerics::this_cpu().x86_64_v3) {
    std::cerr << "tagflow-torch: numerics: the BLAS is " << (library.empty() ? "unknown" : library)
              << ", not OpenBLAS: the digest is specific to this machine (scripts/setup selects "
                 "OpenBLAS)\n";
  }
}

std::string blas_startup_line() {
  const std::string library = mapped_blas_library();
  const std::string kind = blas_kind(library);
  const std::string where = library.empty() ? "not mapped" : library;
  if (kind == "reference") {
    return "BLAS: reference BLAS (" + where +
           ") - about 25x slower for these networks; install libopenblas0-pthread";
  }
  return "BLAS: " + kind + " (" + where + ")";
}

}  // namespace tagflow::cli
