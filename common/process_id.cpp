// getpid() that asks the kernel once per process, linked into the tagflow programs (the object
// library tagflow_process_id, common/CMakeLists.txt).
//
// Why: ZeroMQ 4.3 compares getpid() with the process id it saw at a socket's creation each time it
// looks into a mailbox (its check for a fork), and glibc has not cached the process id since 2.25,
// so every look cost a system call. In the local demo cluster that was 970,000 of the run's 2.86
// million system calls (`perf stat -a -e syscalls:sys_enter_getpid` around `tagflow up
// configs/local.yaml`), and a system call is dear on a virtual machine. A program defines getpid
// here, the executable exports it (ZeroMQ's shared library refers to the symbol), and the dynamic
// linker binds every library's calls to it; glibc's own internal calls are not affected.
//
// The cached id is forgotten in the child of every fork() (pthread_atfork), so a forked child asks
// the kernel again and ZeroMQ still sees the fork. What would see a stale id: a child made by a
// raw clone(2) without glibc's fork() that calls getpid() before exec. No code in these programs
// does that (process_supervisor.cpp and the benchmarks fork(); posix_spawn's child calls no
// getpid() before exec).
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>

namespace {

std::atomic<pid_t> cached_pid{0};

void forget_pid_in_child() { cached_pid.store(0, std::memory_order_relaxed); }

// Registered before any other constructor of the program runs (priority 101, the first one not
// reserved): a fork made by a library's own constructor is covered too.
__attribute__((constructor(101))) void watch_forks() {
  pthread_atfork(nullptr, nullptr, forget_pid_in_child);
}

}  // namespace

extern "C" pid_t getpid() noexcept {
  pid_t pid = cached_pid.load(std::memory_order_relaxed);
  if (pid == 0) {
    pid = static_cast<pid_t>(syscall(SYS_getpid));
    cached_pid.store(pid, std::memory_order_relaxed);
  }
  return pid;
}
