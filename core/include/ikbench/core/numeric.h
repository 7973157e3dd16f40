// Named numeric constants shared by the kinematics, the solvers and the
// harness. Each says what it guards against, so a reader never has to guess
// why a literal is there.
#pragma once

#include <cstdint>

namespace ikbench {

// Smallest magnitude treated as non-zero before a division or a square root
// (a norm, a pivot, a singular value). Far below any meaningful quantity in
// metres or radians, far above the denormal range, so 1 / kTinyDivisor is
// finite.
inline constexpr double kTinyDivisor = 1e-300;

// A step whose tangent norm |dq| falls below this is no longer moving the
// configuration at double precision for joint values of order 1 (about
// 100 ulp of 1): the attempt has stalled.
inline constexpr double kVanishingStep = 1e-14;

// Joint limits are checked with this slack, so a configuration clamped onto a
// limit (and written and read back as text) counts as within it.
inline constexpr double kLimitSlack = 1e-9;

// Two solutions of one IK problem are distinct when their joint-space
// distance (revolute angles compared modulo 2 pi) is above this [rad or m].
// Far above the spread of answers that converge to 1e-5 on the same branch,
// far below the distance between the branches of a 6R arm (elbow up/down,
// wrist flip: of order 1 rad).
inline constexpr double kDistinctSolutionDistance = 1e-3;

// Salts of the random streams derived from one seed with Rng::mix; distinct
// constants keep the streams independent of each other.
inline constexpr std::uint64_t kRestartStreamSalt = 0x1CB5EEDULL;  // restart configurations of a solve
inline constexpr std::uint64_t kTrackPathSalt = 0x7AC4ULL;         // the joint-space path of a tracking family

}  // namespace ikbench
