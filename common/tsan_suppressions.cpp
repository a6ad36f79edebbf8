// ThreadSanitizer suppressions for every tagflow executable and test (the `tsan` preset only:
// `./dev sanitize tsan`). Linked into each of them as the object library
// tagflow_tsan_suppressions, so a binary run by hand, or started by a test, carries them too.
//
// Each entry names a library that Debian ships without ThreadSanitizer instrumentation. Such a
// library hands data from one of its threads to another, or to ours, through its own lock-free
// queues and atomics, which ThreadSanitizer cannot see: the first touch of that data on the
// receiving thread then looks like a race with the thread that wrote it. Races between threads
// that only tagflow code touches are still reported.
//
// - CAF 0.17 (`race:`: a CAF frame on one of the two stacks). An actor is created on one thread
//   and runs its handlers on a scheduler worker; a message is written by its sender and read by
//   the receiver's worker, ordered by CAF's mailbox and work-stealing queues
//   (caf::scheduler::worker::run, scheduled_actor::finalize, mailbox elements).
// - CAF's OpenSSL module, libssl and libcrypto (`race:`). Actor mode's TLS runs in CAF's
//   multiplexer thread on buffers CAF hands over the same way.
// - ZeroMQ 4.3 (`called_from_lib`: the memory functions libzmq calls are not watched, and
//   `race:`). A received frame is written by the context's I/O thread (its decoder's memcpy into
//   a buffer it allocated) and handed to the socket's owner through zmq's ypipe; the I/O thread
//   reads socket options and routing ids the owner set before. Without called_from_lib the
//   owner's first read of a frame (msgpack decoding a received header, a routing-id compare) is
//   reported as a race with a write whose stack ThreadSanitizer can no longer restore, so a
//   `race:` entry could not match it. A zero-copy payload (zmq_msg_init_data) is released by the
//   I/O thread once sent: its free function drops a shared_ptr there.
// - spdlog (`race:`). Its registry of loggers is a function-local static inside libspdlog.so,
//   whose guarded initialisation ThreadSanitizer does not see: the first thread that logs
//   constructs it, and another thread's first log call then looks like a race with that.
// - libsodium (`called_from_lib`). libzmq's I/O thread decrypts CURVE frames in place with it
//   (crypto_secretbox_open_detached) before handing them over as above.
#if defined(__SANITIZE_THREAD__)
extern "C" const char* __tsan_default_suppressions() {  // NOLINT: the name is TSan's
  return "race:libcaf_core.so\n"
         "race:libcaf_io.so\n"
         "race:libcaf_openssl.so\n"
         "race:libssl.so\n"
         "race:libcrypto.so\n"
         "called_from_lib:libzmq.so.5\n"
         "race:libzmq.so\n"
         "race:libspdlog.so\n"
         "called_from_lib:libsodium.so.23\n";
}
#endif
