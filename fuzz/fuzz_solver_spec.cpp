// Spec strings -> splitSpecList, expandSpecGrid, Registry::parse and create:
// specs, solvers or a SpecError naming what is wrong; never a crash, another
// exception or an allocation sized by the text (grids are capped).
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_check.h"
#include "ikbench/solvers/registry.h"
#include "ikbench/solvers/solver_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 4096) return -1;
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> list;
  try {
    list = ikbench::splitSpecList(text);
  } catch (const ikbench::SpecError&) {
    return 0;
  }
  for (const std::string& item : list) {
    try {
      const ikbench::SpecGrid grid = ikbench::expandSpecGrid(item);
      IKBENCH_FUZZ_CHECK(!grid.specs.empty() && grid.specs.size() <= static_cast<size_t>(ikbench::kMaxGridSpecs));
      // A few of the grid's specs: parsing is checked, creation too.
      for (size_t k = 0; k < grid.specs.size() && k < 4; ++k) {
        const ikbench::SolverSpec spec = ikbench::Registry::global().parse(grid.specs[k]);
        IKBENCH_FUZZ_CHECK(ikbench::Registry::global().create(spec) != nullptr);
      }
    } catch (const ikbench::SpecError&) {
    }
  }
  return 0;
}
