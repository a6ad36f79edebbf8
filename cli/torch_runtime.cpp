// Process-wide LibTorch settings shared by the tagflow-torch commands.
#include <ATen/Parallel.h>
#include <dlfcn.h>

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
