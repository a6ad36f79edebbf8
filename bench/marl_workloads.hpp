// The workloads `tagflow bench marl --only` takes, in one place for the two programs that read
// them: `tagflow` refuses any other before LibTorch starts (cli/torch_bench_options.cpp) and
// `tagflow-torch` runs them (marl_bench.cpp). NAME runs TrafficJunction NAME in every placement;
// NAME-in-process only its three one-process placements (the plain loop, the reactor and the
// actor runtime).
#pragma once

#include <array>
#include <string>
#include <string_view>

namespace tagflow::bench {

/// Every value of --only, the default (tj10) among them.
inline constexpr std::array<std::string_view, 4> kMarlWorkloads = {"tj4", "tj10", "tj4-in-process",
                                                                   "tj10-in-process"};
inline constexpr std::string_view kMarlInProcessSuffix = "-in-process";

[[nodiscard]] inline bool is_marl_workload(std::string_view only) {
  for (const std::string_view name : kMarlWorkloads) {
    if (only == name) return true;
  }
  return false;
}

/// "tj4, tj10, tj4-in-process or tj10-in-process": the values in help texts and refusals.
[[nodiscard]] inline std::string marl_workload_list() {
  std::string list;
  for (std::size_t i = 0; i < kMarlWorkloads.size(); ++i) {
    if (i != 0) list += i + 1 == kMarlWorkloads.size() ? " or " : ", ";
    list += kMarlWorkloads[i];
  }
  return list;
}

/// The refusal of an --only that names no workload, as both programs word it.
[[nodiscard]] inline std::string marl_workload_refusal(const std::string& only) {
  return "--only takes " + marl_workload_list() + ", not '" + only + "'";
}

}  // namespace tagflow::bench
