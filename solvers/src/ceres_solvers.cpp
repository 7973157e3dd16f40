// Registration of the ceres backends (filled in by their own issue).
#include "ikbench/solvers/registry.h"

namespace ikbench {

void registerCeresSolvers(Registry&) {}

}  // namespace ikbench
