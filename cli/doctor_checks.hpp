// The individual checks behind `tagflow doctor` (see doctor.hpp). Each returns one Check and
// never throws.
#pragma once

#include <string>
#include <vector>

#include "cli/doctor.hpp"

namespace tagflow::cli {

Check check_caf();
Check check_zeromq();
Check check_msgpack();
Check check_prometheus_cpp();
/// Runs `tagflow-torch probe` and reads its JSON: LibTorch version and the BLAS it loaded.
std::vector<Check> check_libtorch(const std::string& torch_probe);
Check check_cores();
/// The kernel's transparent huge pages, which the heap of every process `tagflow` starts asks for
/// (cli/process_defaults.hpp): a warning, never a failure, when they are off.
Check check_huge_pages();
/// The mode in the text of /sys/kernel/mm/transparent_hugepage/enabled ("always madvise
/// [never]" says never), or "" when there is no bracketed word.
[[nodiscard]] std::string huge_page_mode(const std::string& enabled_text);
Check check_prometheus_server();
/// The ports of `config_path`: those `tagflow up FILE [--host HOST]` would listen on here, at their
/// addresses, for a cluster file it can plan; else every port the file names, at 127.0.0.1
/// (collect_config_ports()). A file it would refuse is one failed check, `cluster file`; a
/// `host` the file lacks one failed check, `hosts`.
std::vector<Check> check_ports(const std::string& config_path, const std::string& host = "");

}  // namespace tagflow::cli
