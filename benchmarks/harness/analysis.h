// The C++ CLI's bridge to the analysis library (python/ikbench): `ikbench run`
// ends with its summary table, and `ikbench compare` / `ikbench report` are
// its commands (`ikbench tune` hands over to it by exec). Every figure is
// defined there, once.
#pragma once

#include <string>
#include <vector>

namespace ikbench::harness {

// Runs `python3 -m ikbench ARGS...` with the package on PYTHONPATH and
// returns its exit status (stdout and stderr pass through). The interpreter
// is $IKBENCH_PYTHON, else /usr/bin/python3 (Debian's, with numpy, pandas and
// scipy), else python3 on PATH; the package is $IKBENCH_PYTHONPATH, else
// this source tree's python/, else the installed copy. Returns -1 (and says
// why on stderr) when no interpreter or package can be found.
int runAnalysis(const std::vector<std::string>& args);

// Replaces this process by `python3 -m ikbench ARGS...` (the same interpreter,
// package and environment as runAnalysis): for a subcommand the analysis
// library owns, such as `tune`, so that no C++ process waits on Python.
// Returns only on failure: -1, having said why on stderr.
int execAnalysis(const std::vector<std::string>& args);

// Where the analysis library was found (empty if nowhere).
std::string analysisPackageDir();

}  // namespace ikbench::harness
