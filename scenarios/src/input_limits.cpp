#include "ikbench/scenarios/input_limits.h"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

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
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) throw SuiteError(fmt::format("cannot open {} '{}': no such file", what, path));
  if (!std::filesystem::is_regular_file(status))
    throw SuiteError(fmt::format("cannot read {} '{}': not a regular file", what, path));
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec && size > kMaxInputFileBytes)
    throw SuiteError(fmt::format("{} '{}' is {} bytes (the limit is {} bytes)", what, path, size, kMaxInputFileBytes));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SuiteError(fmt::format("cannot open {} '{}'", what, path));
  std::ostringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  if (text.size() > kMaxInputFileBytes)
    throw SuiteError(fmt::format("{} '{}' is larger than the limit of {} bytes", what, path, kMaxInputFileBytes));
  return text;
}

}  // namespace ikbench
