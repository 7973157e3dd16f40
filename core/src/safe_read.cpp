#include "ikbench/core/safe_read.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>

namespace ikbench {

const char* fileKind(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

int openRegularFile(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    throw InputFileError(err == ENOENT ? fmt::format("{}: no such file", path)
                                       : fmt::format("{}: cannot read: {}", path, std::strerror(err)));
  }
  if (!S_ISREG(st.st_mode)) throw InputFileError(fmt::format("{}: {}, not a regular file", path, fileKind(st.st_mode)));
  // O_NONBLOCK: had the name become a FIFO since the stat, open would not wait for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) throw InputFileError(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw InputFileError(fmt::format("{}: {}, not a regular file", path, fileKind(st.st_mode)));
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

std::string readRegularFile(const std::string& path, std::size_t max_bytes) {
  const int fd = openRegularFile(path);
  struct stat st {};
  if (::fstat(fd, &st) == 0 && static_cast<std::size_t>(st.st_size) > max_bytes) {
    ::close(fd);
    throw InputFileError(fmt::format("{}: {} bytes, more than a reader takes ({} bytes)", path,
                                     static_cast<long long>(st.st_size), max_bytes));
  }
  std::string text;
  text.reserve(static_cast<std::size_t>(st.st_size));
  readBlocks(fd, path, [&](const char* p, std::size_t n) {
    if (text.size() + n > max_bytes)
      throw InputFileError(fmt::format("{}: more than a reader takes ({} bytes)", path, max_bytes));
    text.append(p, n);
  });
  return text;
}

}  // namespace ikbench
