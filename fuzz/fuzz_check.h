// A fuzz-target assertion: prints the failed condition and aborts, which
// libFuzzer reports as a crash with the input that caused it.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

namespace ikbench::fuzz {
// What the current input is doing (e.g. the backend and the model), printed
// with a failed check.
inline std::string& context() {
  static std::string text;
  return text;
}
}  // namespace ikbench::fuzz

#define IKBENCH_FUZZ_CHECK(cond)                                                          \
  do {                                                                                    \
    if (!(cond)) {                                                                        \
      std::fprintf(stderr, "%s:%d: fuzz check failed: %s\n%s\n", __FILE__, __LINE__, #cond,  \
                   ::ikbench::fuzz::context().c_str());                                    \
      std::abort();                                                                       \
    }                                                                                     \
  } while (0)
