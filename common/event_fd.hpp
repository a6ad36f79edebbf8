// EventFd: a Linux eventfd (non-blocking, close-on-exec) that one thread signals and another
// polls for POLLIN beside its other descriptors, to end that thread's wait. Owns the descriptor.
#pragma once

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <system_error>

namespace tagflow {

class EventFd {
 public:
  /// Throws std::system_error when the kernel gives no eventfd (e.g. out of descriptors).
  EventFd() : fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
    if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "eventfd");
  }
  ~EventFd() { ::close(fd_); }
  EventFd(const EventFd&) = delete;
  EventFd& operator=(const EventFd&) = delete;

  /// The descriptor to poll for POLLIN.
  [[nodiscard]] int fd() const { return fd_; }
  /// Makes fd() readable until clear().
  void signal() const {
    const std::uint64_t one = 1;
    (void)!::write(fd_, &one, sizeof one);
  }
  /// Takes in every signal so far (nothing when there was none).
  void clear() const {
    std::uint64_t count = 0;
    (void)!::read(fd_, &count, sizeof count);
  }

 private:
  int fd_;
};

}  // namespace tagflow
