// A suite built in code for `ikbench run --chain DOF`.
#pragma once

#include <cstdint>

#include "ikbench/scenarios/suite.h"

namespace ikbench::harness {

// Families chain<DOF>-position and chain<DOF>-pose (`samples` reachable goals
// over 4 random revolute chains, limits +-2.5 rad) and chain<DOF>-track
// (sequential: pose targets along a smooth joint-space path on one chain).
Suite chainSuite(int dof, int samples, std::uint64_t seed);

}  // namespace ikbench::harness
