// `tagflow-torch probe`: what LibTorch sees in this process, as one JSON object on stdout:
// torch_version, intra_op_threads, blas_library (the BLAS shared object mapped into the process),
// blas_kind ("openblas", "reference", "mkl", "blis" or "unknown"), matmul_us (a 64x1350 by
// 1350x64 product, best of 20), numerics (the kernels, common/numerics.hpp's describe()) and
// numerics_portable. `tagflow doctor` runs it.
#pragma once

#include <string>

namespace tagflow::cli {

/// The BLAS library mapped into this process (read from /proc/self/maps), or "".
std::string mapped_blas_library();

/// Classifies a BLAS library path: "openblas", "reference", "mkl", "blis" or "unknown".
std::string blas_kind(const std::string& library_path);

int run_torch_probe();

}  // namespace tagflow::cli
