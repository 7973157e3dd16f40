// A small, portable, seeded random generator.
//
// The C++ standard fixes std::mt19937_64's output but not the algorithms of
// std::uniform_real_distribution or std::normal_distribution, so results
// would differ between standard libraries. Every random choice in ikbench goes
// through this class instead: xoshiro256** (Blackman & Vigna 2018) seeded by
// splitmix64, with distributions written out here, so the same seed gives
// bit-identical numbers on every machine and compiler.
#pragma once

#include <Eigen/Core>
#include <Eigen/Geometry>
#include <cstdint>
#include <string_view>

namespace ikbench {

class Rng {
 public:
  explicit Rng(std::uint64_t seed = 0);

  // Derives an independent stream, e.g. Rng(seed).fork(problem_index), so that
  // problem i gets the same numbers whatever thread or order it runs in.
  static std::uint64_t mix(std::uint64_t a, std::uint64_t b);
  // FNV-1a (64 bit) of a string: a fixed, portable hash (std::hash is
  // neither) for deriving seeds from names.
  static std::uint64_t hash(std::string_view text);

  std::uint64_t next();
  // Uniform in [0, 1) with 53 random bits.
  double uniform();
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  // Uniform integer in [lo, hi] (inclusive).
  int uniformInt(int lo, int hi);
  // Standard normal (Box-Muller, both values used).
  double normal();
  Eigen::Vector3d unitVector();
  // Uniformly distributed rotation (Shoemake 1992, "Uniform random rotations").
  Eigen::Quaterniond rotation();

 private:
  std::uint64_t s_[4];
  double spare_normal_ = 0.0;
  bool has_spare_ = false;
};

}  // namespace ikbench
