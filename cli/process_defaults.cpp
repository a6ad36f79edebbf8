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
  // LibTorch's static initialisers allocate some 80 MB of small objects while it loads, each new
  // 4 KiB page of the heap a page fault (about 20,000 of a LibTorch process's 34,600 before its
  // first line); on transparent huge pages that heap faults in 2 MiB at a time (bench/RESULTS.md).
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  ::setenv("GLIBC_TUNABLES",
           tunables_with_huge_page_malloc(tunables == nullptr ? "" : tunables).c_str(), 1);
}

}  // namespace tagflow::cli
