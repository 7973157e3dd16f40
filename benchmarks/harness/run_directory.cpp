#include "harness/run_directory.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>

#include "harness/gzip_stream.h"
#include "harness/results_format.h"

namespace ikbench::harness {
namespace fs = std::filesystem;

Shard parseShard(const std::string& text) {
  const size_t slash = text.find('/');
  auto bad = [&]() {
    return HarnessError(fmt::format("--shard '{}': expected K/N with 1 <= K <= N <= 100000, e.g. 2/8", text));
  };
  if (slash == std::string::npos) throw bad();
  Shard s;
  try {
    size_t used = 0;
    s.index = std::stoi(text.substr(0, slash), &used);
    if (used != slash) throw bad();
    const std::string n = text.substr(slash + 1);
    s.count = std::stoi(n, &used);
    if (used != n.size()) throw bad();
  } catch (const std::logic_error&) {
    throw bad();
  }
  if (s.count < 1 || s.count > 100000 || s.index < 1 || s.index > s.count) throw bad();
  return s;
}

namespace {

// Writes dir/name atomically: the parts, in order, into a temporary file
// beside it (".NAME.tmp-PID", created O_EXCL | O_NOFOLLOW with mode 0666 less
// the umask), synced, then renamed over dir/name, which a link there does not
// survive. A name ending in ".gz" gets the parts gzip-compressed.
// HarnessError naming `shown` (the path the user knows) and the reason; the
// temporary file never outlives a failure.
void replaceFile(const std::string& dir, const std::string& name, const std::vector<std::string_view>& parts,
                 const std::string& shown) {
  const std::string path = (fs::path(dir) / name).string();
  const std::string tmp = (fs::path(dir) / fmt::format(".{}.tmp-{}", name, static_cast<long>(::getpid()))).string();
  auto fail = [&](const std::string& what) {
    const std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    throw HarnessError(fmt::format("cannot write '{}': {}: {}", shown, what, why));
  };
  ::unlink(tmp.c_str());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd < 0) fail("open");
  // Small parts are gathered into blocks of about a megabyte per write.
  std::string block;
  auto flush = [&]() {
    size_t done = 0;
    while (done < block.size()) {
      const ssize_t n = ::write(fd, block.data() + done, block.size() - done);
      if (n < 0) {
        if (errno == EINTR) continue;
        ::close(fd);
        fail("write");
      }
      done += static_cast<size_t>(n);
    }
    block.clear();
  };
  auto take = [&](const char* p, size_t n) {
    block.append(p, n);
    if (block.size() >= (size_t{1} << 20)) flush();
  };
  if (hasGzipSuffix(name)) {
    try {
      GzipWriter gz(take);
      for (const std::string_view part : parts) gz.write(part);
      gz.finish();
    } catch (const ResultsError& e) {  // zlib's own failure (memory); a failed write has thrown HarnessError
      ::close(fd);
      ::unlink(tmp.c_str());
      throw HarnessError(fmt::format("cannot write '{}': {}", shown, e.what()));
    }
  } else {
    for (const std::string_view part : parts) take(part.data(), part.size());
  }
  flush();
  if (::fsync(fd) != 0) {
    ::close(fd);
    fail("fsync");
  }
  if (::close(fd) != 0) fail("close");
  if (::rename(tmp.c_str(), path.c_str()) != 0) fail("rename");
}

}  // namespace

const std::vector<std::string>& RunDirectory::runFiles() {
  static const std::vector<std::string> files = [] {
    std::vector<std::string> f = {"run.json", kPartialFile, "summary.csv", "throughput.json", "report.html",
                                  "bench_kinematics.json", "bench_solvers.json"};
    for (const std::string& name : kManifestFiles) {
      f.push_back(name);
      f.push_back(name + std::string(kGzipSuffix));
    }
    return f;
  }();
  return files;
}

namespace {

// The file an output path finally names: links followed (at most 40, as the
// kernel does), relative targets taken from the link's directory.
fs::path resolveOutput(const std::string& path) {
  fs::path p = path;
  for (int hops = 0;; ++hops) {
    std::error_code ec;
    const fs::file_status st = fs::symlink_status(p, ec);
    if (ec || !fs::is_symlink(st)) return p;
    if (hops == 40) throw HarnessError(fmt::format("cannot write '{}': too many levels of symbolic links", path));
    const fs::path target = fs::read_symlink(p, ec);
    if (ec) throw HarnessError(fmt::format("cannot write '{}': {}", path, ec.message()));
    p = target.is_absolute() ? target : p.parent_path() / target;
  }
}


}  // namespace

void checkOutputFile(const std::string& path) {
  const fs::path target = resolveOutput(path);
  std::error_code ec;
  struct stat st {};
  if (::stat(target.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    throw HarnessError(fmt::format("cannot write '{}'{}: it is {}; an output is a regular file or a new name",
                                   path, target == fs::path(path) ? "" : fmt::format(" (a link to '{}')", target.string()),
                                   fileKind(st.st_mode)));
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec))
    throw HarnessError(fmt::format("cannot write '{}': '{}' is not a directory", path, dir.string()));
}

void writeOutputFile(const std::string& path, const std::string& content) {
  checkOutputFile(path);
  const fs::path target = resolveOutput(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  replaceFile(dir.string(), target.filename().string(), {content}, path);
}

std::string safeDirectoryName(const std::string& name) {
  std::string out;
  for (unsigned char c : name) out += (std::isalnum(c) || c == '.' || c == '-' || c == '_') ? static_cast<char>(c) : '_';
  if (out.empty() || out.find_first_not_of('.') == std::string::npos)
    throw HarnessError(fmt::format("'{}' cannot name a results directory", name));
  return out;
}

RunDirectory::RunDirectory(const std::string& dir, OutputMode mode) : dir_(dir) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) throw HarnessError(fmt::format("cannot create output directory '{}': {}", dir_, ec.message()));
  if (!fs::is_directory(dir_, ec)) throw HarnessError(fmt::format("output path '{}' is not a directory", dir_));

  const std::string lock = file(kLockFile);
  lock_fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666);
  if (lock_fd_ < 0)
    throw HarnessError(fmt::format("output directory '{}' is not writable: {}", dir_, std::strerror(errno)));
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    char buf[32] = {0};
    const ssize_t n = ::pread(lock_fd_, buf, sizeof buf - 1, 0);
    ::close(lock_fd_);
    lock_fd_ = -1;
    throw HarnessError(fmt::format("output directory '{}' is in use by another ikbench run (pid {}); wait for it "
                                   "to end or choose another --out",
                                   dir_, n > 0 ? std::string(buf, static_cast<size_t>(n)) : "unknown"));
  }
  const std::string pid = std::to_string(::getpid());
  if (::ftruncate(lock_fd_, 0) != 0 || ::pwrite(lock_fd_, pid.data(), pid.size(), 0) < 0) {
    // The pid is only for the message of a second run; the lock itself holds.
  }

  try {
    prepare(mode);
  } catch (...) {
    ::close(lock_fd_);  // the destructor does not run for a constructor that throws
    lock_fd_ = -1;
    throw;
  }
}

void RunDirectory::prepare(OutputMode mode) {
  std::error_code ec;
  bool empty = true;
  for (const auto& entry : fs::directory_iterator(dir_, ec))
    if (entry.path().filename() != kLockFile) empty = false;
  // Temporary files of a writer that was killed (".NAME.tmp-PID"): no other
  // process writes here while the lock is held, so they are removed before a
  // --force or --resume run goes on.
  if (mode != OutputMode::kFresh) {
    for (const auto& entry : fs::directory_iterator(dir_, ec)) {
      const std::string name = entry.path().filename().string();
      if (name.size() > 1 && name[0] == '.' && name.find(".tmp-") != std::string::npos && !entry.is_directory(ec))
        remove(name);
    }
  }
  switch (mode) {
    case OutputMode::kFresh:
      if (!empty)
        throw HarnessError(fmt::format("output directory '{}' is not empty: give --force to replace the results in "
                                       "it, or --resume to complete an interrupted run",
                                       dir_));
      break;
    case OutputMode::kForce:
      // run.json first: from here on the directory reads as incomplete.
      for (const std::string& f : runFiles()) remove(f);
      fs::remove_all(fs::path(dir_) / "plots", ec);
      break;
    case OutputMode::kResume:
      if (!exists("run.json"))
        throw HarnessError(fmt::format("--resume: '{}' holds no run to resume (no run.json)", dir_));
      break;
  }
}

RunDirectory::~RunDirectory() {
  closePartial();
  if (lock_fd_ >= 0) ::close(lock_fd_);  // releases the lock; the empty lock file stays
}

std::string RunDirectory::file(const std::string& name) const { return (fs::path(dir_) / name).string(); }

bool RunDirectory::exists(const std::string& name) const {
  std::error_code ec;
  return fs::exists(file(name), ec);
}

void RunDirectory::writeAtomically(const std::string& name, const std::string& content) const {
  writeAtomically(name, std::vector<std::string_view>{content});
}

void RunDirectory::writeAtomically(const std::string& name, const std::vector<std::string_view>& parts) const {
  // The run owns the names in its directory: a link or a stale file of that
  // name is replaced, never written through.
  replaceFile(dir_, name, parts, file(name));
}

void RunDirectory::remove(const std::string& name) const {
  if (::unlink(file(name).c_str()) != 0 && errno != ENOENT)
    throw HarnessError(fmt::format("cannot remove '{}': {}", file(name), std::strerror(errno)));
}

void RunDirectory::writeJson(const std::string& name, const nlohmann::json& j) const {
  writeAtomically(name, j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

nlohmann::json RunDirectory::readJson(const std::string& name) const {
  return parseJsonText(readRegularFile(file(name), kMaxRunJsonBytes), file(name));
}

void RunDirectory::openPartial(const std::string& header) {
  closePartial();
  const std::string path = file(kPartialFile);
  const bool fresh = !exists(kPartialFile);
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
  partial_ = fd < 0 ? nullptr : ::fdopen(fd, "a");
  if (fd >= 0 && !partial_) ::close(fd);
  if (!partial_) throw HarnessError(fmt::format("cannot write '{}': {}", path, std::strerror(errno)));
  if (fresh) appendPartial(header + "\n");
}

void RunDirectory::appendPartial(const std::string& lines) {
  if (!partial_ || lines.empty()) return;
  if (std::fwrite(lines.data(), 1, lines.size(), partial_) != lines.size() || std::fflush(partial_) != 0)
    throw HarnessError(fmt::format("cannot write '{}': {}", file(kPartialFile), std::strerror(errno)));
  ::fdatasync(fileno(partial_));
}

void RunDirectory::closePartial() {
  if (partial_) std::fclose(partial_);
  partial_ = nullptr;
}

std::vector<std::string> RunDirectory::readPartial(const std::string& header) const {
  std::vector<std::string> lines;
  if (!exists(kPartialFile)) return lines;
  const std::string text = readRegularFile(file(kPartialFile), std::numeric_limits<std::size_t>::max());
  const size_t eol = text.find('\n');
  if (eol == std::string::npos) return lines;
  if (text.compare(0, eol, header) != 0)
    throw HarnessError(fmt::format("--resume: '{}' was written by another version of ikbench (its header differs)",
                                   file(kPartialFile)));
  // A line cut by a kill has no newline at its end: only lines followed by
  // '\n' are kept.
  size_t start = eol + 1;
  for (size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1)
    if (nl > start) lines.push_back(text.substr(start, nl - start));
  return lines;
}

}  // namespace ikbench::harness
