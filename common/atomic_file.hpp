// AtomicFile: writing a file so that readers see either the old file or the whole new one,
// never a part — checkpoints, results, reports and keys all go through it.
//
// The bytes go to a temporary file beside `path` (same directory, so the rename cannot cross
// file systems; its name carries the process id, so two writers never share one). commit()
// flushes and fsyncs it, renames it over `path` and fsyncs the directory, so after commit()
// returns the new file survives a power loss. Destroyed without commit() — an exception, an
// early return — the temporary is removed and `path` is untouched.
//
// A large file can be completed before commit() without holding it in memory: flush() what was
// written, read() it back in pieces (a checksum) and overwrite() a few bytes (a footer).
//
// Errors: AtomicFileError (a std::runtime_error naming the file and the system's reason) when
// the temporary cannot be created, written, flushed or renamed, and when `path` exists and is
// neither a regular file nor a symbolic link (a device such as /dev/null, a directory, a pipe:
// the rename would replace it with a regular file). Not thread-safe: one writer per
// object; different objects may write different paths at once.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace tagflow {

/// Whether `path` exists and is neither a regular file nor a symbolic link (a rename replaces a
/// link itself, not what it points to): a device, a directory, a pipe, which AtomicFile refuses
/// to replace.
[[nodiscard]] bool is_special_file(const std::string& path);

/// Whether `file_name` is the name of an AtomicFile's temporary (".NAME.tmp.PID"): what a writer
/// killed before its commit() leaves behind, never a finished file.
[[nodiscard]] bool is_atomic_temporary(std::string_view file_name);

class AtomicFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class AtomicFile {
 public:
  /// Creates the temporary for `path` (opened "w+b": it can be read back before commit()).
  /// `mode` is the new file's permission bits (0600 for secrets), narrowed by the umask as for
  /// any file a process creates.
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
  /// What was written so far, flushed to the temporary (not synced): read() and overwrite() see it.
  void flush();
  /// The temporary's size after flush().
  [[nodiscard]] std::uint64_t size() const;
  /// Reads `size` bytes at `offset` of the temporary (after flush()) into `data`.
  void read(std::uint64_t offset, void* data, std::size_t size) const;
  /// Reads the temporary's first `size` bytes (after flush()) back in order, in pieces of at most
  /// 1 MiB, handing each to `visit` (a checksum over a file of any size in bounded memory).
  void read_pieces(std::uint64_t size,
                   const std::function<void(const char* data, std::size_t size)>& visit) const;
  /// Replaces the bytes at `offset` of the temporary (after flush()), which must be written.
  void overwrite(std::uint64_t offset, std::string_view bytes);
  /// Flush, fsync, rename over path(), fsync the directory. Call once.
  void commit();

 private:
  [[noreturn]] void fail(const std::string& what, const std::string& file) const;
  /// Throws when `error` (read_fd_pieces' result) is not 0.
  void fail_read(int error) const;

  std::string path_;
  std::string temporary_;
  std::FILE* file_ = nullptr;
  bool committed_ = false;
};

/// Writes `bytes` to `path` atomically (AtomicFile in one call).
void write_file_atomically(const std::string& path, std::string_view bytes, unsigned mode = 0644);

/// Readies `path` for a write_file_atomically() later: refuses a directory or a directory's name
/// (ending in `/`, `.` or `..`), creates its missing parent directories, then checks that its
/// directory takes new files (one is made there and removed). Returns ""
/// when it can be written, else why not ("cannot create the directory D: ...", "cannot write in
/// D: Permission denied", ...). For result files such as `--summary PATH`, checked before a run
/// so that a long run does not end unable to write its result.
[[nodiscard]] std::string prepare_output_file(const std::string& path);

/// The first `size` bytes of the open file `fd`, read in order with pread() (the descriptor's
/// offset does not move) in pieces of at most 1 MiB, each handed to `visit`: a checksum over a
/// file of any size in bounded memory. Returns 0, the errno of a read that failed, or
/// kShortFile when the file ends before `size` bytes.
inline constexpr int kShortFile = -1;
[[nodiscard]] int read_fd_pieces(
    int fd, std::uint64_t size,
    const std::function<void(const char* data, std::size_t size)>& visit);

}  // namespace tagflow
