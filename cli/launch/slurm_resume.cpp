#include "cli/launch/slurm_resume.hpp"

#include <filesystem>
#include <stdexcept>
#include <system_error>

#include "cli/launch/cluster_launcher.hpp"
#include "common/atomic_file.hpp"
#include "common/state_stream.hpp"

namespace tagflow::cli {
namespace {

namespace fs = std::filesystem;

/// What a run directory keeps of the run besides its checkpoints: the file it started with and
/// its mode.
constexpr const char* kRecords[] = {kRunFile, kModeFile};

/// A file an atomic write left behind when its writer died: no part of any checkpoint.
bool unfinished_write(const fs::path& path) {
  return is_atomic_temporary(path.filename().string());
}

[[noreturn]] void fail(const std::string& what, const fs::path& path,
                       const std::error_code& error) {
  throw std::runtime_error(what + " " + path.string() + ": " + error.message());
}

}  // namespace

void record_slurm_node(const std::string& run_dir, const std::string& host, int node,
                       const std::string& node_name) {
  const fs::path path = fs::path(run_dir) / "slurm-nodes" / host / std::to_string(node);
  std::error_code error;
  fs::create_directories(path.parent_path(), error);  // every node's launcher makes it at once
  try {
    write_file_atomically(path.string(), node_name + "\n", 0600);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("cannot record this node's place in the run: ") +
                             e.what());
  }
}

std::string recorded_node_directory(const std::string& run_dir, const std::string& host, int node) {
  const fs::path record = fs::path(run_dir) / "slurm-nodes" / host / std::to_string(node);
  std::error_code error;
  if (!fs::is_regular_file(record, error)) return "";
  std::string name;
  try {
    name = read_whole_file(record.string(), 256);
  } catch (const StateError&) {
    return "";
  }
  while (!name.empty() && (name.back() == '\n' || name.back() == '\r')) name.pop_back();
  // A node's name, never a path out of the run directory.
  if (name.empty() || name == "." || name == ".." || name == "slurm-nodes" || name == "keys" ||
      name.find('/') != std::string::npos || name.find('\0') != std::string::npos) {
    return "";
  }
  const fs::path directory = fs::path(run_dir) / name;
  return fs::is_directory(directory, error) ? directory.string() : "";
}

std::vector<std::string> job_attempts(const std::string& run_dir) {
  std::vector<std::string> attempts{run_dir};
  std::error_code error;
  for (int k = 1; fs::is_directory(run_dir + "-requeue" + std::to_string(k), error); ++k) {
    attempts.insert(attempts.begin(), run_dir + "-requeue" + std::to_string(k));
  }
  return attempts;
}

bool kept_checkpoints(const std::string& directory) {
  std::error_code error;
  const fs::path root = fs::path(directory) / "checkpoints";
  if (!fs::is_directory(root, error)) return false;
  for (fs::recursive_directory_iterator it(root, error), end; !error && it != end;
       it.increment(error)) {
    if (it->is_regular_file(error) && !unfinished_write(it->path())) return true;
  }
  return false;
}

std::optional<std::string> earlier_node_directory(const std::vector<std::string>& earlier,
                                                  const std::string& host, int node) {
  for (const std::string& run : earlier) {
    const std::string directory = recorded_node_directory(run, host, node);
    if (!directory.empty() && kept_checkpoints(directory)) return directory;
  }
  return std::nullopt;
}

void continue_run_directory(const std::string& from, const std::string& directory) {
  const fs::path source(from);
  const fs::path target(directory);
  std::error_code error;
  if (fs::exists(target, error) && !fs::is_empty(target, error)) {
    throw std::runtime_error("cannot continue " + from + " in " + directory +
                             ": that directory is not empty");
  }
  fs::create_directories(target, error);
  if (error) fail("cannot create", target, error);
  for (const char* record : kRecords) {
    if (!fs::exists(source / record, error)) continue;
    fs::copy_file(source / record, target / record, fs::copy_options::overwrite_existing, error);
    if (error) fail("cannot copy", source / record, error);
  }
  const fs::path checkpoints = source / "checkpoints";
  fs::create_directories(target / "checkpoints", error);
  if (error) fail("cannot create", target / "checkpoints", error);
  fs::recursive_directory_iterator it(checkpoints, error);
  if (error) fail("cannot read", checkpoints, error);
  for (const fs::recursive_directory_iterator end; it != end; it.increment(error)) {
    if (error) fail("cannot read", checkpoints, error);
    const fs::path to = target / "checkpoints" / fs::relative(it->path(), checkpoints);
    const fs::file_status status = it->symlink_status(error);
    if (fs::is_directory(status)) {
      fs::create_directories(to, error);
      if (error) fail("cannot create", to, error);
    } else if (fs::is_regular_file(status) && !unfinished_write(it->path())) {
      // A checkpoint's files are written once, by rename, and never changed: one inode serves
      // both runs. Where links cannot be made (another file system), a copy.
      fs::create_hard_link(it->path(), to, error);
      if (error) {
        error.clear();
        fs::copy_file(it->path(), to, error);
        if (error) fail("cannot copy", it->path(), error);
      }
    }
  }
  if (error) fail("cannot read", checkpoints, error);
}

}  // namespace tagflow::cli
