// Entry points of the benchmarks built into the tagflow CLI; bench/registry.cpp lists them.
#pragma once

#include "bench/registry.hpp"

namespace tagflow::bench {

BenchReport run_codec_bench(const BenchOptions& options);

}  // namespace tagflow::bench
