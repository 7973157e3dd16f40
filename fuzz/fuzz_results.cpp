// The readers of a results directory (benchmarks/harness/results_reader.h):
// the input is run.json, models.json, problems.jsonl and solves.csv (or,
// starting with gzip's magic bytes, solves.csv.gz) of one run, separated by
// the byte 0x1e (ASCII record separator), written into a
// scratch directory and read back as `ikbench verify` reads them, apart from
// the manifest (whose hashes a mutated input would never match). Every input
// gives a ResultsError or a run whose problems and returned configurations fit
// their models.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "fuzz_check.h"
#include "harness/results_reader.h"
#include "ikbench/kinematics/config.h"

namespace {

const std::string& scratch() {
  static const std::string dir = [] {
    const auto d = std::filesystem::temp_directory_path() / ("ikbench-fuzz-results-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d.string();
  }();
  return dir;
}

void put(const std::string& name, const std::string& text) {
  std::ofstream(scratch() + "/" + name, std::ios::binary | std::ios::trunc) << text;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ikbench;
  using namespace ikbench::harness;
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> parts(1);
  for (char c : text) {
    if (c == '\x1e' && parts.size() < 4) parts.emplace_back();
    else parts.back() += c;
  }
  if (parts.size() != 4) return -1;
  put("run.json", parts[0]);
  put("models.json", parts[1]);
  put("problems.jsonl", parts[2]);
  // A solves part that starts with gzip's magic bytes is a compressed
  // solves.csv.gz (truncated, corrupt and bomb streams included).
  const bool gzip = parts[3].size() >= 2 && parts[3][0] == '\x1f' && parts[3][1] == '\x8b';
  std::filesystem::remove(scratch() + (gzip ? "/solves.csv" : "/solves.csv.gz"));
  put(gzip ? "solves.csv.gz" : "solves.csv", parts[3]);
  put("solutions.csv", "family,problem,solver,solution,q\n");
  put("traces.csv",
      "family,problem,solver,iteration,position_error,orientation_error,step_norm,damping,elapsed_us,time_us,q\n");
  try {
    const ResultsDirectory r = readResults(scratch(), /*require_complete=*/false, /*rows=*/true);
    const auto models = readModels(r);
    const auto problems = readProblems(r, models);
    for (const auto& [key, problem] : problems) {
      IKBENCH_FUZZ_CHECK(problem.model != nullptr && problem.q0.size() == problem.model->nq());
      IKBENCH_FUZZ_CHECK(std::get<0>(key) >= 0 && std::get<0>(key) < static_cast<int>(r.families.size()));
    }
    const size_t c_q = r.column("q");
    for (const auto& [key, line] : r.solves) {
      IKBENCH_FUZZ_CHECK(std::get<2>(key) >= 0 && std::get<2>(key) < static_cast<int>(r.solvers.size()));
      const auto cells = parseCsvLine(line, "solves.csv");
      IKBENCH_FUZZ_CHECK(cells.size() == r.solve_header.size());
      const auto it = problems.find({std::get<0>(key), std::get<1>(key)});
      if (it == problems.end()) continue;
      const Eigen::VectorXd q = parseConfigText(cells[c_q], "solves.csv");
      std::string why;
      (void)isValidConfiguration(*it->second.model, q, &why);
    }
  } catch (const ResultsError&) {
  }
  return 0;
}
