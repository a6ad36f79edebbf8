// libFuzzer target: the cluster-file loader (nodes/cluster/cluster_config.hpp, configs/README.md)
// on arbitrary text.
//
// Beyond "no crash, no sanitizer report": the only exception a bad file may cause is
// ConfigError (file, line, key); anything else escapes and libFuzzer reports it.
#include <cstddef>
#include <cstdint>
#include <string>

#include "nodes/cluster/cluster_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);  // NOLINT
  try {
    (void)tagflow::cluster::parse_cluster_config(text, "fuzz.yaml");
  } catch (const tagflow::cluster::ConfigError&) {
  }
  return 0;
}
