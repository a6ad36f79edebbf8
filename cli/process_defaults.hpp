// What `tagflow` sets in its own environment, and so in that of every process it starts
// (tagflow-torch, a launcher's coordinator and node processes), unless the environment already
// says otherwise: OpenBLAS on one thread, and glibc's malloc on transparent huge pages.
#pragma once

#include <string>

namespace tagflow::cli {

/// The tunable that makes glibc's malloc ask for transparent huge pages (madvise) for the heap
/// it grows and the large blocks it maps.
inline constexpr const char* kHugePageMallocTunable = "glibc.malloc.hugetlb=1";

/// GLIBC_TUNABLES `current` with kHugePageMallocTunable appended, unless `current` already sets
/// glibc.malloc.hugetlb (to any value, 0 included: the user's choice stays).
[[nodiscard]] std::string tunables_with_huge_page_malloc(const std::string& current);

/// Sets OPENBLAS_NUM_THREADS=1 unless it is set, and GLIBC_TUNABLES to
/// tunables_with_huge_page_malloc() of its value. Only processes started after this see them:
/// glibc reads its tunables when a program starts.
void set_started_process_defaults();

}  // namespace tagflow::cli
