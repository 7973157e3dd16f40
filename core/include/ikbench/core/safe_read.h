// Bounded, non-blocking reads of input files: the one rule every reader of
// the project follows (suite, scene, URDF and BVH loaders, the results
// readers, the playground's parts). A file is opened without blocking (a
// FIFO or a terminal would wait for a writer), checked on the open
// descriptor to be a regular file (so that the file read is the file
// checked), and read in blocks with a byte limit (a device such as /dev/zero
// has no size). Errors are InputFileError, whose message starts with the path.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <string>

namespace ikbench {

class InputFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "a directory", "a FIFO", "a character device", "a block device", "a socket"
// or "not a regular file".
const char* fileKind(mode_t mode);

// An open descriptor of the regular file at `path` (blocking reads again).
// InputFileError "<path>: no such file", "<path>: cannot read: <why>" or
// "<path>: <kind>, not a regular file".
int openRegularFile(const std::string& path);

// The whole regular file at `path`; InputFileError as above, or
// "<path>: N bytes, more than a reader takes (max_bytes bytes)".
std::string readRegularFile(const std::string& path, std::size_t max_bytes);

// Reads all of fd in blocks, handing each block to `take`; closes fd (also
// when `take` throws).
template <typename F>
void readBlocks(int fd, const std::string& path, F&& take) {
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      throw InputFileError(path + ": cannot read: " + std::strerror(errno));
    }
    take(buf, static_cast<std::size_t>(n));
  }
}

}  // namespace ikbench
