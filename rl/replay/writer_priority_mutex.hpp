// WriterPriorityMutex: a reader-writer mutex whose writers are not starved by a steady stream of
// readers. Table guards its selector (the sum tree) with one: samplers hold the shared side while
// they descend the tree and copy items, so any number of them run at once; writers (a batch of
// lazy writes, an eviction) take the exclusive side. std::shared_mutex on glibc prefers readers:
// two samplers whose shared sections overlap back to back could keep a writer out for ever. Here
// a waiting writer blocks new readers, so it waits for at most the readers already inside.
//
// Meets the standard SharedMutex requirements (use std::unique_lock / std::shared_lock). glibc's
// rwlock with PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP: readers take it with one atomic
// operation when no writer waits, and waiters sleep in the kernel instead of spinning.
// A thread must not take the shared side twice (a writer waiting between the two would deadlock).
// Errors: a failing pthread call is a programmer error (std::terminate via noexcept).
#pragma once

#include <pthread.h>

namespace tagflow::replay {

class WriterPriorityMutex {
 public:
  WriterPriorityMutex() noexcept {
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
#if defined(__GLIBC__)
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
#endif
    pthread_rwlock_init(&lock_, &attr);
    pthread_rwlockattr_destroy(&attr);
  }
  ~WriterPriorityMutex() { pthread_rwlock_destroy(&lock_); }
  WriterPriorityMutex(const WriterPriorityMutex&) = delete;
  WriterPriorityMutex& operator=(const WriterPriorityMutex&) = delete;

  void lock() noexcept { pthread_rwlock_wrlock(&lock_); }
  void unlock() noexcept { pthread_rwlock_unlock(&lock_); }
  void lock_shared() noexcept { pthread_rwlock_rdlock(&lock_); }
  void unlock_shared() noexcept { pthread_rwlock_unlock(&lock_); }

 private:
  pthread_rwlock_t lock_;
};

}  // namespace tagflow::replay
