#include "ikbench/external/child_process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

extern char** environ;

namespace ikbench::external {
namespace {

int remainingMs(ChildProcess::Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - ChildProcess::Clock::now());
  if (left.count() <= 0) return 0;
  return left.count() > 1'000'000 ? 1'000'000 : static_cast<int>(left.count());
}

void closeFd(int* fd) {
  if (*fd >= 0) ::close(*fd);
  *fd = -1;
}

}  // namespace

std::unique_ptr<ChildProcess> ChildProcess::start(const std::string& command, std::string* why) {
  int to_child[2], from_child[2];
  if (::pipe2(to_child, O_CLOEXEC) != 0) {
    *why = fmt::format("cannot create a pipe: {}", std::strerror(errno));
    return nullptr;
  }
  if (::pipe2(from_child, O_CLOEXEC) != 0) {
    *why = fmt::format("cannot create a pipe: {}", std::strerror(errno));
    ::close(to_child[0]);
    ::close(to_child[1]);
    return nullptr;
  }
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attr);
  // dup2 clears close-on-exec on the child's 0 and 1; every other pipe end closes at exec.
  posix_spawn_file_actions_adddup2(&actions, to_child[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, from_child[1], STDOUT_FILENO);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
  // Nothing else of the harness's (its results files, descriptors opened without close-on-exec).
  posix_spawn_file_actions_addclosefrom_np(&actions, STDERR_FILENO + 1);
#endif
  // Its own process group, so that stop() reaches what the shell starts too;
  // default SIGPIPE and an empty signal mask whatever the harness thread has.
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  const char* argv[] = {"/bin/sh", "-c", command.c_str(), nullptr};
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, "/bin/sh", &actions, &attr, const_cast<char* const*>(argv), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(to_child[0]);
  ::close(from_child[1]);
  if (rc != 0) {
    *why = fmt::format("posix_spawn of /bin/sh failed: {}", std::strerror(rc));
    ::close(to_child[1]);
    ::close(from_child[0]);
    return nullptr;
  }
  std::unique_ptr<ChildProcess> p(new ChildProcess());
  p->pid_ = pid;
  p->in_ = to_child[1];
  p->out_ = from_child[0];
  ::fcntl(p->in_, F_SETFL, ::fcntl(p->in_, F_GETFL) | O_NONBLOCK);
  ::fcntl(p->out_, F_SETFL, ::fcntl(p->out_, F_GETFL) | O_NONBLOCK);
  return p;
}

ChildProcess::~ChildProcess() { stop(); }

ChildProcess::Io ChildProcess::write(std::string_view data, Clock::time_point deadline) {
  if (in_ < 0) return Io::kClosed;
  // SIGPIPE blocked in this thread for the write; one raised by it is consumed below.
  sigset_t pipe_set, old;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
  Io result = Io::kOk;
  while (!data.empty()) {
    const ssize_t n = ::write(in_, data.data(), data.size());
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EPIPE) {
      const timespec zero{0, 0};
      while (sigtimedwait(&pipe_set, nullptr, &zero) == SIGPIPE) {
      }
      result = Io::kClosed;
      break;
    }
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
      error_ = fmt::format("write to the solver process: {}", std::strerror(errno));
      result = Io::kError;
      break;
    }
    pollfd p{in_, POLLOUT, 0};
    const int ms = remainingMs(deadline);
    if (ms == 0) {
      result = Io::kTimeout;
      break;
    }
    const int r = ::poll(&p, 1, ms);
    if (r == 0) {
      result = Io::kTimeout;
      break;
    }
    if (r < 0 && errno != EINTR) {
      error_ = fmt::format("poll: {}", std::strerror(errno));
      result = Io::kError;
      break;
    }
    // POLLERR / POLLHUP: the next write says EPIPE.
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return result;
}

ChildProcess::Io ChildProcess::readLine(std::string* line, size_t max_bytes, Clock::time_point deadline) {
  size_t scanned = 0;
  for (;;) {
    const size_t nl = buffer_.find('\n', scanned);
    if (nl != std::string::npos) {
      if (nl > max_bytes) return Io::kTooLong;
      line->assign(buffer_, 0, nl);
      buffer_.erase(0, nl + 1);
      return Io::kOk;
    }
    if (buffer_.size() > max_bytes) return Io::kTooLong;
    scanned = buffer_.size();
    if (out_ < 0) return Io::kClosed;
    char chunk[65536];
    const ssize_t n = ::read(out_, chunk, sizeof chunk);
    if (n > 0) {
      buffer_.append(chunk, static_cast<size_t>(n));
      continue;
    }
    if (n == 0) return Io::kClosed;
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      error_ = fmt::format("read from the solver process: {}", std::strerror(errno));
      return Io::kError;
    }
    pollfd p{out_, POLLIN, 0};
    const int ms = remainingMs(deadline);
    if (ms == 0) return Io::kTimeout;
    const int r = ::poll(&p, 1, ms);
    if (r == 0) return Io::kTimeout;
    if (r < 0 && errno != EINTR) {
      error_ = fmt::format("poll: {}", std::strerror(errno));
      return Io::kError;
    }
  }
}

bool ChildProcess::reap(bool wait) {
  if (reaped_ || pid_ <= 0) return true;
  for (;;) {
    const pid_t r = ::waitpid(pid_, &wait_status_, wait ? 0 : WNOHANG);
    if (r == pid_) return reaped_ = true;
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return reaped_ = true;  // ECHILD: nothing left to reap
    return false;
  }
}

void ChildProcess::stop(std::chrono::milliseconds grace) {
  closeFd(&in_);
  if (pid_ > 0 && !reaped_) {
    const auto until = Clock::now() + grace;
    while (!reap(false) && Clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    // The whole group: what the shell started goes too (and a survivor of the
    // child in the group is not left behind).
    ::kill(-pid_, SIGKILL);
    reap(true);
  }
  closeFd(&out_);
}

std::string ChildProcess::exitText() {
  if (!reap(false)) return "still running";
  if (WIFEXITED(wait_status_)) {
    const int status = WEXITSTATUS(wait_status_);
    // /bin/sh reports a command killed by signal n as its own exit status 128 + n.
    if (status > 128 && status < 128 + NSIG)
      return fmt::format("exited with status {} (the shell's report of signal {}, {})", status, status - 128,
                         ::strsignal(status - 128));
    return fmt::format("exited with status {}", status);
  }
  if (WIFSIGNALED(wait_status_))
    return fmt::format("killed by signal {} ({})", WTERMSIG(wait_status_), ::strsignal(WTERMSIG(wait_status_)));
  return "ended";
}

}  // namespace ikbench::external
