#include "harness/analysis.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

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

int runAnalysis(const std::vector<std::string>& args) {
  std::string python = "python3";
  if (const char* env = std::getenv("IKBENCH_PYTHON"); env && *env) {
    python = env;
  } else if (access("/usr/bin/python3", X_OK) == 0) {
    python = "/usr/bin/python3";
  }
  const std::string pkg = analysisPackageDir();
  if (pkg.empty()) {
    std::cerr << "ikbench: the analysis library (python/ikbench) was not found; set IKBENCH_PYTHONPATH\n";
    return -1;
  }
  std::string pythonpath = pkg;
  if (const char* old = std::getenv("PYTHONPATH"); old && *old) pythonpath += std::string(":") + old;
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "PYTHONPATH=", 11) != 0) env_strings.emplace_back(*e);
  env_strings.push_back("PYTHONPATH=" + pythonpath);
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);

  std::vector<std::string> argv_strings = {python, "-m", "ikbench"};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);

  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, python.c_str(), nullptr, nullptr, argv.data(), envp.data());
  if (rc != 0) {
    std::cerr << "ikbench: cannot run " << python << ": " << std::strerror(rc) << '\n';
    return -1;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

}  // namespace ikbench::harness
