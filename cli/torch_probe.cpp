#include "cli/torch_probe.hpp"

#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/rand.h>
#include <torch/csrc/api/include/torch/version.h>

#include <chrono>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "common/numerics.hpp"

namespace tagflow::cli {

std::string mapped_blas_library() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    const auto slash = line.find('/');
    if (slash == std::string::npos) continue;
    const std::string path = line.substr(slash);
    const std::string file = path.substr(path.rfind('/') + 1);
    if (file.find("blas") != std::string::npos || file.find("mkl_rt") != std::string::npos ||
        file.find("blis") != std::string::npos) {
      return path;
    }
  }
  return "";
}

std::string blas_kind(const std::string& library_path) {
  if (library_path.find("openblas") != std::string::npos) return "openblas";
  if (library_path.find("mkl") != std::string::npos) return "mkl";
  if (library_path.find("blis") != std::string::npos) return "blis";
  if (library_path.find("/blas/libblas") != std::string::npos) return "reference";
  return "unknown";
}

int run_torch_probe() {
  // One product first so that a lazily loaded BLAS is mapped before /proc/self/maps is read.
  const at::Tensor input = at::rand({64, 1350});
  const at::Tensor weight = at::rand({1350, 64});
  at::Tensor out = at::matmul(input, weight);
  double best_us = 1e300;
  for (int i = 0; i < 20; ++i) {
    const auto start = std::chrono::steady_clock::now();
    out = at::matmul(input, weight);
    const auto end = std::chrono::steady_clock::now();
    best_us = std::min(best_us, std::chrono::duration<double, std::micro>(end - start).count());
  }
  const std::string library = mapped_blas_library();
  const numerics::Report kernels = numerics::process_report();
  nlohmann::json report = {
      {"torch_version", TORCH_VERSION},
      {"intra_op_threads", at::get_num_threads()},
      {"blas_library", library},
      {"blas_kind", blas_kind(library)},
      {"matmul_us", best_us},
      {"numerics", numerics::describe(kernels)},
      {"numerics_portable", kernels.portable},
  };
  std::cout << report.dump() << "\n";
  return 0;
}

}  // namespace tagflow::cli
