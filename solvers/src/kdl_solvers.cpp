// Registration of the kdl backends (filled in by their own issue).
#include "ikbench/solvers/registry.h"

namespace ikbench {

void registerKdlSolvers(Registry&) {}

}  // namespace ikbench
