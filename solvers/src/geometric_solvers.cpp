// Registration of the geometric backends (filled in by their own issue).
#include "ikbench/solvers/registry.h"

namespace ikbench {

void registerGeometricSolvers(Registry&) {}

}  // namespace ikbench
