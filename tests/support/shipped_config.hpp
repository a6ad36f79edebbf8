// Test helpers for tests that run an edited copy of a shipped cluster file (configs/*.yaml) and
// compare run summaries. Header-only, like run_command.hpp.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/launched_processes.hpp"

namespace tagflow::testing {

/// Replaces the first `from` in `text`, the text of the shipped file `file`; a test failure
/// (naming the file) when the file no longer contains it, so a changed demo fails loudly
/// instead of silently testing something else.
inline void replace_once(std::string& text, const std::string& from, const std::string& to,
                         const std::string& file) {
  const std::size_t at = text.find(from);
  if (at == std::string::npos) {
    ADD_FAILURE() << file << " no longer contains: " << from;
    return;
  }
  text.replace(at, from.size(), to);
}

/// The digest of the run summary JSON at `summary`, or "(no summary at PATH)".
inline std::string summary_digest(const std::filesystem::path& summary) {
  const nlohmann::json json = nlohmann::json::parse(read_text_file(summary), nullptr, false);
  if (json.is_discarded() || !json.contains("digest")) {
    return "(no summary at " + summary.string() + ")";
  }
  return json.at("digest").get<std::string>();
}

}  // namespace tagflow::testing
