// ThreadSanitizer suppressions for the actor-mode tests.
//
// Debian's CAF 0.17 (libcaf_core, libcaf_io) is not built with ThreadSanitizer. An actor is
// created on one thread and runs its handlers on a scheduler worker; a message is written by the
// sender and read by the receiver's worker. CAF orders both through its own lock-free mailbox and
// work-stealing queues inside those libraries, which ThreadSanitizer cannot see, so every first
// touch of an actor's state or of a message on a worker looks like a race with the thread that
// made it (the reports name caf::scheduler::worker::run, scheduled_actor::finalize, mailbox
// elements). Only reports with a CAF library frame in one of the two stacks are suppressed;
// races between threads that CAF does not run (a host thread and a test thread) are still
// reported, and tagflow's own cross-thread state (ReplicaReport, metrics) is atomics or mutexes.
#if defined(__SANITIZE_THREAD__)
extern "C" const char* __tsan_default_suppressions() {  // NOLINT: the name is TSan's
  return "race:libcaf_core.so\nrace:libcaf_io.so\n";
}
#endif
