#include "ikbench/scenarios/input_limits.h"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>

#include "ikbench/core/safe_read.h"
#include "ikbench/scenarios/suite.h"

namespace ikbench {

// Beside the file reader, so that a program with the scene reader and not
// the suite reader (the playground's WebAssembly module) has it.
std::string dataDirectory() {
  if (const char* env = std::getenv("IKBENCH_DATA_DIR"); env != nullptr && *env != '\0') return env;
#ifdef IKBENCH_SCENARIOS_DATA_SOURCE_DIR
  if (std::filesystem::is_directory(IKBENCH_SCENARIOS_DATA_SOURCE_DIR)) return IKBENCH_SCENARIOS_DATA_SOURCE_DIR;
#endif
#ifdef IKBENCH_SCENARIOS_DATA_INSTALL_DIR
  return IKBENCH_SCENARIOS_DATA_INSTALL_DIR;
#else
  return "scenarios/data";
#endif
}

std::string readInputFile(const std::string& path, const char* what) {
  // core's bounded, non-blocking read (a FIFO, a device or a directory is
  // refused without reading it), its message prefixed with what the file is.
  try {
    return readRegularFile(path, kMaxInputFileBytes);
  } catch (const InputFileError& e) {
    throw SuiteError(fmt::format("cannot read {} {}", what, e.what()));
  }
}

}  // namespace ikbench
