// Linked into every gtest executable (cmake/TagflowTesting.cmake): each test process gets a
// directory of its own for ::testing::TempDir(), made before main and removed, with everything
// in it, when the process exits. So what a test writes there does not outlive it, and files that
// two tests name alike never meet. GoogleTest reads TEST_TMPDIR first; only TempDir() moves:
// std::filesystem::temp_directory_path() (TMPDIR) stays the machine's /tmp, where the free-port
// claims of common/loopback_ports.hpp must be shared by every test and program.
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace {

class TestProcessTmpdir {
 public:
  TestProcessTmpdir() {
    // One set by the caller (or by a test process this one was started from) is kept as it is.
    const char* given = ::getenv("TEST_TMPDIR");
    if (given != nullptr && *given != '\0') return;
    char pattern[] = "/tmp/tagflow-test-XXXXXX";
    if (::mkdtemp(pattern) == nullptr) return;  // TempDir() then falls back to /tmp/
    // Readable like /tmp's own files were: some tests hand paths in it to other processes.
    ::chmod(pattern, 0755);
    dir_ = pattern;
    owner_ = ::getpid();
    ::setenv("TEST_TMPDIR", (dir_ + "/").c_str(), 1);
  }
  ~TestProcessTmpdir() {
    // A child forked by a test that exits through exit() leaves its parent's directory alone.
    if (dir_.empty() || ::getpid() != owner_) return;
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  TestProcessTmpdir(const TestProcessTmpdir&) = delete;
  TestProcessTmpdir& operator=(const TestProcessTmpdir&) = delete;

 private:
  std::string dir_;
  pid_t owner_ = 0;
};

const TestProcessTmpdir test_process_tmpdir;

}  // namespace
