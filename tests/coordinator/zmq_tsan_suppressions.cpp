// ThreadSanitizer suppressions for the tests that use ZeroMQ.
//
// libzmq is not built with ThreadSanitizer: its I/O thread receives a message into a buffer and
// hands it to the application thread through libzmq's own lock-free pipe, whose synchronization
// ThreadSanitizer cannot see. Every read of a received frame then looks like a race with the I/O
// thread's recv(). Only reports with a libzmq frame in one of the two stacks are suppressed; races
// between tagflow's own threads are still reported.
#if defined(__SANITIZE_THREAD__)
extern "C" const char* __tsan_default_suppressions() {  // NOLINT: the name is TSan's
  return "race:libzmq.so\n";
}
#endif
