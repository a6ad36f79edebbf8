#include "common/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace tagflow {

AtomicFile::AtomicFile(std::string path, unsigned mode) : path_(std::move(path)) {
  const std::filesystem::path target(path_);
  const std::filesystem::path directory =
      target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
  temporary_ =
      (directory / ("." + target.filename().string() + ".tmp." + std::to_string(::getpid())))
          .string();
  const int fd =
      ::open(temporary_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, static_cast<mode_t>(mode));
  if (fd < 0) fail("cannot create", temporary_);
  ::fchmod(fd, static_cast<mode_t>(mode));  // the umask may have narrowed it
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

}  // namespace tagflow
