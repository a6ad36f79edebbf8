#include "common/atomic_file.hpp"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace tagflow {
namespace {

/// Between a temporary's ".NAME" and its writer's pid (is_atomic_temporary()).
constexpr std::string_view kTemporaryInfix = ".tmp.";

/// Reads `size` bytes at `offset` of `fd` into `data`: 0, errno, or kShortFile.
int pread_all(int fd, std::uint64_t offset, void* data, std::size_t size) {
  auto* at = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t n = ::pread(fd, at, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return kShortFile;
    at += n;
    offset += static_cast<std::uint64_t>(n);
    size -= static_cast<std::size_t>(n);
  }
  return 0;
}

}  // namespace

bool is_special_file(const std::string& path) {
  std::error_code error;
  const auto type = std::filesystem::symlink_status(path, error).type();
  return !error && type != std::filesystem::file_type::not_found &&
         type != std::filesystem::file_type::regular && type != std::filesystem::file_type::symlink;
}

namespace {

/// Why `path` may not be replaced by a rename, or "" when it may (is_special_file()): a device
/// such as /dev/null, a directory or a pipe would otherwise become a regular file.
std::string not_replaceable(const std::string& path) {
  if (!is_special_file(path)) return "";
  return path + " is not a regular file (a directory, a pipe or a device): it is not replaced";
}

}  // namespace

bool is_atomic_temporary(std::string_view file_name) {
  const std::size_t infix = file_name.rfind(kTemporaryInfix);
  if (file_name.size() < 2 || file_name.front() != '.' || infix == std::string_view::npos ||
      infix == 0) {
    return false;
  }
  const std::string_view pid = file_name.substr(infix + kTemporaryInfix.size());
  return !pid.empty() && pid.find_first_not_of("0123456789") == std::string_view::npos;
}

AtomicFile::AtomicFile(std::string path, unsigned mode) : path_(std::move(path)) {
  if (const std::string why = not_replaceable(path_); !why.empty()) throw AtomicFileError(why);
  const std::filesystem::path target(path_);
  const std::filesystem::path directory =
      target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
  temporary_ = (directory / ("." + target.filename().string() + std::string(kTemporaryInfix) +
                             std::to_string(::getpid())))
                   .string();
  // Created afresh (a temporary left by a crashed process of the same pid would keep its mode):
  // `mode` is the most the file grants, the umask narrows it as for any new file (a Slurm job's
  // `umask 077` keeps its run directory's files private).
  ::unlink(temporary_.c_str());
  const int fd =
      ::open(temporary_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, static_cast<mode_t>(mode));
  if (fd < 0) fail("cannot create", temporary_);
  file_ = ::fdopen(fd, "w+b");
  if (file_ == nullptr) {
    ::close(fd);
    ::unlink(temporary_.c_str());
    fail("cannot open", temporary_);
  }
}

AtomicFile::~AtomicFile() {
  if (file_ != nullptr) std::fclose(file_);
  if (!committed_) ::unlink(temporary_.c_str());
}

void AtomicFile::write(std::string_view bytes) {
  if (std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size()) {
    fail("cannot write", temporary_);
  }
}

void AtomicFile::flush() {
  if (std::fflush(file_) != 0) fail("cannot write", temporary_);
}

std::uint64_t AtomicFile::size() const {
  struct stat info {};
  if (::fstat(::fileno(file_), &info) != 0) fail("cannot stat", temporary_);
  return static_cast<std::uint64_t>(info.st_size);
}

void AtomicFile::read(std::uint64_t offset, void* data, std::size_t size) const {
  fail_read(pread_all(::fileno(file_), offset, data, size));
}

void AtomicFile::read_pieces(
    std::uint64_t size,
    const std::function<void(const char* data, std::size_t size)>& visit) const {
  fail_read(read_fd_pieces(::fileno(file_), size, visit));
}

void AtomicFile::fail_read(int error) const {
  if (error == 0) return;
  errno = error == kShortFile ? EIO : error;  // shorter than asked: something else truncated it
  fail("cannot read back", temporary_);
}

void AtomicFile::overwrite(std::uint64_t offset, std::string_view bytes) {
  if (offset + bytes.size() > size()) {
    throw std::logic_error("AtomicFile::overwrite past the end of " + temporary_);
  }
  const char* at = bytes.data();
  std::size_t left = bytes.size();
  while (left > 0) {
    const ssize_t n = ::pwrite(::fileno(file_), at, left, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("cannot write", temporary_);
    at += n;
    offset += static_cast<std::uint64_t>(n);
    left -= static_cast<std::size_t>(n);
  }
}

void AtomicFile::commit() {
  if (committed_ || file_ == nullptr) throw std::logic_error("AtomicFile::commit called twice");
  const bool flushed = std::fflush(file_) == 0 && ::fsync(::fileno(file_)) == 0;
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  if (!flushed || !closed) fail("cannot flush", temporary_);
  if (::rename(temporary_.c_str(), path_.c_str()) != 0) fail("cannot rename onto", path_);
  committed_ = true;
  const std::filesystem::path parent = std::filesystem::path(path_).parent_path();
  const std::string directory = parent.empty() ? "." : parent.string();
  const int dir_fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
}

void AtomicFile::fail(const std::string& what, const std::string& file) const {
  throw AtomicFileError(what + " " + file + ": " + std::strerror(errno));
}

void write_file_atomically(const std::string& path, std::string_view bytes, unsigned mode) {
  AtomicFile file(path, mode);
  file.write(bytes);
  file.commit();
}

std::string prepare_output_file(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (fs::is_directory(path, error)) return path + " is a directory";
  // "DIR/", "DIR/." or "..": a directory's name, whether or not it exists yet (made here, it
  // would be refused only when the file is written, after the work).
  if (const std::string name = fs::path(path).filename().string();
      name.empty() || name == "." || name == "..") {
    return path + " names a directory, not a file";
  }
  if (const std::string why = not_replaceable(path); !why.empty()) return why;
  // The temporary beside it takes the name with a dot and a suffix: both must fit in a name.
  if (fs::path(path).filename().string().size() + 32 > NAME_MAX) {
    return "the file name is longer than " + std::to_string(NAME_MAX - 32) + " bytes";
  }
  fs::path directory = fs::path(path).parent_path();
  if (directory.empty()) directory = ".";
  fs::create_directories(directory, error);
  if (error) return "cannot create the directory " + directory.string() + ": " + error.message();
  if (!fs::is_directory(directory, error)) return directory.string() + " is not a directory";
  // write_file_atomically() makes a temporary file beside `path`, then renames it over `path`:
  // one is made and removed now. (Permission bits alone do not say it: root passes access(2) on
  // /proc, where no file can be made.)
  const std::string probe =
      (directory / (".tagflow-write-check." + std::to_string(::getpid()))).string();
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return "cannot write in " + directory.string() + ": " + std::strerror(errno);
  ::close(fd);
  ::unlink(probe.c_str());
  return "";
}

int read_fd_pieces(int fd, std::uint64_t size,
                   const std::function<void(const char* data, std::size_t size)>& visit) {
  constexpr std::uint64_t kPiece = std::uint64_t{1} << 20;
  std::string piece(static_cast<std::size_t>(size < kPiece ? size : kPiece), '\0');
  for (std::uint64_t at = 0; at < size; at += piece.size()) {
    const auto n = static_cast<std::size_t>(size - at < piece.size() ? size - at : piece.size());
    if (const int error = pread_all(fd, at, piece.data(), n); error != 0) return error;
    visit(piece.data(), n);
  }
  return 0;
}

}  // namespace tagflow
