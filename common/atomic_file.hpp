// AtomicFile: writing a file so that readers see either the old file or the whole new one,
// never a part — checkpoints, results, reports and keys all go through it.
//
// The bytes go to a temporary file beside `path` (same directory, so the rename cannot cross
// file systems; its name carries the process id, so two writers never share one). commit()
// flushes and fsyncs it, renames it over `path` and fsyncs the directory, so after commit()
// returns the new file survives a power loss. Destroyed without commit() — an exception, an
// early return — the temporary is removed and `path` is untouched.
//
// Errors: AtomicFileError (a std::runtime_error naming the file and the system's reason) when
// the temporary cannot be created, written, flushed or renamed. Not thread-safe: one writer per
// object; different objects may write different paths at once.
#pragma once

#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>

namespace tagflow {

class AtomicFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class AtomicFile {
 public:
  /// Creates the temporary for `path` (opened "w+b": it can be read back before commit()).
  /// `mode` is the new file's permission bits (0600 for secrets).
  explicit AtomicFile(std::string path, unsigned mode = 0644);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  /// The open temporary, for code that writes through stdio.
  [[nodiscard]] std::FILE* get() const { return file_; }
  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] const std::string& temporary_path() const { return temporary_; }
  /// Appends `bytes`.
  void write(std::string_view bytes);
  /// Flush, fsync, rename over path(), fsync the directory. Call once.
  void commit();

 private:
  [[noreturn]] void fail(const std::string& what, const std::string& file) const;

  std::string path_;
  std::string temporary_;
  std::FILE* file_ = nullptr;
  bool committed_ = false;
};

/// Writes `bytes` to `path` atomically (AtomicFile in one call).
void write_file_atomically(const std::string& path, std::string_view bytes, unsigned mode = 0644);

}  // namespace tagflow
