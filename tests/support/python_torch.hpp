// Test helper: a Python interpreter that has PyTorch, for the tests that exchange TorchScript
// files with Python. Header-only.
#pragma once

#include <cstdlib>
#include <string>

namespace tagflow::testing {

/// python3 on the PATH when it has the torch package, else Debian's /usr/bin/python3 (where
/// python3-torch installs) when the PATH has another python3; "" when neither. Looked up once per
/// process, and without importing torch (importlib's find_spec takes milliseconds where `import
/// torch` takes seconds).
inline const std::string& python_with_torch() {
  static const std::string found = [] {
    for (const char* python : {"python3", "/usr/bin/python3"}) {
      const std::string probe =
          std::string(python) +
          " -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec(\"torch\") is None)'"
          " > /dev/null 2>&1";
      if (std::system(probe.c_str()) == 0) return std::string(python);
    }
    return std::string();
  }();
  return found;
}

}  // namespace tagflow::testing
