#include "reactors/parker.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <ctime>

namespace tagflow::reactors {
namespace {

// std::atomic<uint32_t> has the size and alignment of uint32_t on Linux, which the futex needs.
static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t));

std::uint32_t* futex_word(std::atomic<std::uint32_t>& word) {
  return reinterpret_cast<std::uint32_t*>(&word);
}

}  // namespace

void Parker::wait(std::uint32_t seen, std::int64_t timeout_ns) {
  // Order (all seq_cst): sleepers_++ then read epoch_; notify_all bumps epoch_ then reads
  // sleepers_. Either the notifier sees our increment and wakes us, or we see its bump.
  sleepers_.fetch_add(1, std::memory_order_seq_cst);
  if (epoch_.load(std::memory_order_seq_cst) == seen) {
    timespec timeout{};
    timespec* timeout_ptr = nullptr;
    if (timeout_ns >= 0) {
      timeout.tv_sec = static_cast<time_t>(timeout_ns / 1000000000);
      timeout.tv_nsec = static_cast<long>(timeout_ns % 1000000000);
      timeout_ptr = &timeout;
    }
    syscall(SYS_futex, futex_word(epoch_), FUTEX_WAIT_PRIVATE, seen, timeout_ptr, nullptr, 0);
  }
  sleepers_.fetch_sub(1, std::memory_order_seq_cst);
}

void Parker::notify_all() {
  epoch_.fetch_add(1, std::memory_order_seq_cst);
  if (sleepers_.load(std::memory_order_seq_cst) != 0) {
    syscall(SYS_futex, futex_word(epoch_), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
  }
}

}  // namespace tagflow::reactors
