// Suite JSON text -> parseSuite: a suite or a SuiteError. Inputs with an
// integer above 1000 are skipped (returned -1, kept out of the corpus): the
// fuzzer explores the structure of the format, not the time it takes to build
// a million problems, which the field ranges already bound.
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_check.h"
#include "ikbench/scenarios/suite.h"

namespace {
bool hasLargeInteger(const std::string& s) {
  size_t run = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    run = std::isdigit(static_cast<unsigned char>(s[i])) ? run + 1 : 0;
    if (run >= 4) return true;
  }
  return false;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (size > 8192 || hasLargeInteger(text)) return -1;
  try {
    const ikbench::Suite suite = ikbench::parseSuite(text, "/nonexistent/fuzz/suite.json");
    for (const ikbench::Family& f : suite.families)
      for (const ikbench::Problem& p : f.problems) {
        IKBENCH_FUZZ_CHECK(p.model != nullptr && p.q0.size() == p.model->nq());
        IKBENCH_FUZZ_CHECK(p.q0.allFinite());
      }
  } catch (const ikbench::SuiteError&) {
  }
  return 0;
}
