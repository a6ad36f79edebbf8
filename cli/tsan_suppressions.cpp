// ThreadSanitizer suppressions for the tagflow executables (the `thread` sanitizer preset only).
//
// Debian's libzmq and CAF 0.17 are not built with ThreadSanitizer. libzmq hands every received
// frame from its I/O thread to the application thread, and CAF every message and actor from one
// thread to a scheduler worker, through lock-free queues inside those libraries that
// ThreadSanitizer cannot see; each such hand-over looks like a race. Only reports with a frame
// of one of those libraries in one of the two stacks are suppressed; races between tagflow's
// own threads are still reported. Actor mode's TLS runs CAF's OpenSSL module, which calls
// OpenSSL from CAF's multiplexer thread on buffers CAF hands over the same way: libcaf_openssl,
// libssl and libcrypto (none instrumented) are on the list for the same reason. The tests that link
// these libraries carry the same lists (tests/coordinator/zmq_tsan_suppressions.cpp,
// tests/actors/caf_tsan_suppressions.cpp).
#if defined(__SANITIZE_THREAD__)
extern "C" const char* __tsan_default_suppressions() {  // NOLINT: the name is TSan's
  return "race:libzmq.so\nrace:libcaf_core.so\nrace:libcaf_io.so\nrace:libcaf_openssl.so\n"
         "race:libssl.so\nrace:libcrypto.so\n";
}
#endif
