#include "harness/analysis.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

extern char** environ;

namespace ikbench::harness {
namespace fs = std::filesystem;

std::string analysisPackageDir() {
  std::error_code ec;
  if (const char* env = std::getenv("IKBENCH_PYTHONPATH"); env && *env) return env;
  for (const std::string dir : {std::string(IKBENCH_SOURCE_DIR) + "/python", std::string(IKBENCH_PYTHON_INSTALL_DIR)})
    if (fs::exists(fs::path(dir) / "ikbench" / "__init__.py", ec)) return dir;
  return "";
}

namespace {

// The command line and environment of `python3 -m ikbench ARGS...`: the
// interpreter as runAnalysis documents it, the package prepended to
// PYTHONPATH. False (and a message on stderr) when the package is missing.
struct AnalysisCommand {
  std::string python = "python3";
  std::vector<std::string> argv_strings, env_strings;
  std::vector<char*> argv, envp;

  bool build(const std::vector<std::string>& args) {
    if (const char* env = std::getenv("IKBENCH_PYTHON"); env && *env) {
      python = env;
    } else if (access("/usr/bin/python3", X_OK) == 0) {
      python = "/usr/bin/python3";
    }
    const std::string pkg = analysisPackageDir();
    if (pkg.empty()) {
      std::cerr << "ikbench: the analysis library (python/ikbench) was not found; set IKBENCH_PYTHONPATH\n";
      return false;
    }
    std::string pythonpath = pkg;
    if (const char* old = std::getenv("PYTHONPATH"); old && *old) pythonpath += std::string(":") + old;
    for (char** e = environ; *e; ++e)
      if (std::strncmp(*e, "PYTHONPATH=", 11) != 0) env_strings.emplace_back(*e);
    env_strings.push_back("PYTHONPATH=" + pythonpath);
    for (std::string& s : env_strings) envp.push_back(s.data());
    envp.push_back(nullptr);

    argv_strings = {python, "-m", "ikbench"};
    argv_strings.insert(argv_strings.end(), args.begin(), args.end());
    for (std::string& s : argv_strings) argv.push_back(s.data());
    argv.push_back(nullptr);
    return true;
  }
};

}  // namespace

int runAnalysis(const std::vector<std::string>& args) {
  AnalysisCommand cmd;
  if (!cmd.build(args)) return -1;
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, cmd.python.c_str(), nullptr, nullptr, cmd.argv.data(), cmd.envp.data());
  if (rc != 0) {
    std::cerr << "ikbench: cannot run " << cmd.python << ": " << std::strerror(rc) << '\n';
    return -1;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

int execAnalysis(const std::vector<std::string>& args) {
  AnalysisCommand cmd;
  if (!cmd.build(args)) return -1;
  std::cout.flush();
  std::cerr.flush();
  execvpe(cmd.python.c_str(), cmd.argv.data(), cmd.envp.data());
  std::cerr << "ikbench: cannot run " << cmd.python << ": " << std::strerror(errno) << '\n';
  return -1;
}

}  // namespace ikbench::harness
