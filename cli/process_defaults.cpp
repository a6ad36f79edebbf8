#include "cli/process_defaults.hpp"

#include <cstdlib>

namespace tagflow::cli {

std::string tunables_with_huge_page_malloc(const std::string& current) {
  if (current.find("glibc.malloc.hugetlb=") != std::string::npos) return current;
  return current.empty() ? std::string(kHugePageMallocTunable)
                         : current + ":" + kHugePageMallocTunable;
}

void set_started_process_defaults() {
  // OpenBLAS starts its pool's threads while the dynamic loader loads LibTorch, before main(),
  // and each spins about 0.1 s of CPU waiting for work that never comes: tagflow-torch runs
  // OpenBLAS on one thread (cli/torch_runtime.cpp), and `train --threads N` grows the pool itself.
  ::setenv("OPENBLAS_NUM_THREADS", "1", 0);
  // LibTorch's static initialisers grow the heap by some 40 MB of small objects while it loads,
  // each new 4 KiB page a page fault (about 10,000 of the 18,700 a LibTorch process takes before
  // its first line); on transparent huge pages that heap faults in 2 MiB at a time
  // (bench/RESULTS.md, "Build and tests").
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  ::setenv("GLIBC_TUNABLES",
           tunables_with_huge_page_malloc(tunables == nullptr ? "" : tunables).c_str(), 1);
}

}  // namespace tagflow::cli
