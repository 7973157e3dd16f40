// A library of starts: configurations drawn uniformly within the limits,
// each stored with the pose its effector point reaches, and a grid over
// those points. For a target, the entries whose poses lie nearest it are
// starts from which a local method has the least way to go: a cache of IK
// seeds indexed by workspace pose, the idea behind MoveIt's cached IK plugin
// (Moll et al., "Cached IK", 2018) and the nearest-neighbour seeding of
// learned IK (IKFlow, Ames et al. 2022) without the learning.
//
// Solvers use it through the common spec keys `library=<entries>` (restarts
// start from the library's entries nearest the target, nearest first, up to
// kStarts of them, before any uniform draw) and `start=library` (the first
// attempt too).
//
// The distance between an entry and a target is
//   |p - p_t|^2 + rho^2 |R - R_t|_F^2 + s^2     (pose goals)
//   |p - p_t|^2                                 (position goals)
// where |R - R_t|_F^2 = 8 (1 - (q . q_t)^2) (unit quaternions q, q_t) grows
// with the rotation angle between them, and rho [m] (a quarter of the
// largest distance of an entry's point from the entries' centroid) weighs a
// radian of rotation against a quarter of the workspace's radius. s = 5 rho
// max(0, 0.15 - mu) ranks an entry near a joint limit as if its point lay
// up to 0.75 rho farther: mu is the entry's nearest approach to a limit of a
// joint that moves the point, as a fraction of that joint's span. A local
// method started there more often runs into the limit and stalls (on random
// 7-DOF chains most first attempts that failed from the nearest entry ended
// with a joint on a limit), and with the term pose solves take fewer
// lane-steps (docs/performance.md, "A seed library", has the figures).
// Position goals leave a 7-DOF chain four redundant DOFs, rarely trapped by a
// limit: there the term only moved starts away from the nearest and cost
// lane-steps, so position libraries rank by distance alone.
//
// The search is over a uniform grid of the entries' points (kPerCell
// entries per cell of their bounding box on average): the entries of the
// 3 x 3 x 3 cells around the target's cell (wider shells while those hold
// fewer than k) are ranked by the full distance, which is exact among the
// entries whose points lie within one cell of the target and near-exact
// overall. The keys are stored in blocks of eight entries (each coordinate
// a row of eight floats), so that a run of entries is a few contiguous
// cache lines, and ranked a block at a time in single precision by
// |p|^2 - 2 p . p_t - 8 rho^2 (q . q_t)^2, the distance less a constant per
// target (solvers/src/attempts/seed_search.h). A k-d
// tree over the 12 coordinates (p, rho R) gives the exact nearest, but the
// entries fill a 6-dimensional manifold in them, where a k-d tree prunes
// little and costs far more per query than the grid's contiguous scan,
// while the grid's starts need about as few iterations (bench_batch
// LibraryNearest times the grid; docs/performance.md, "A seed library",
// has the comparison).
//
// Entries are drawn from a fixed seed (kSeed mixed with the entry count):
// the same model and count give the same library in every process and on
// every thread.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "ikbench/kinematics/goal.h"
#include "ikbench/kinematics/model.h"
#include "ikbench/solvers/solver_spec.h"

namespace ikbench {

class SeedLibrary {
 public:
  static constexpr int kMaxEntries = 1 << 20;
  // The seed every library draws its entries from (with the entry count).
  static constexpr std::uint64_t kSeed = 0x5eed11b2a2e5ULL;
  // Starts one solve takes from the library: the nearest kNearStarts
  // entries, then the rest of the nearest kStarts; later restarts draw
  // uniformly within the limits.
  static constexpr int kNearStarts = 8;
  static constexpr int kStarts = 256;
  // nearest() ranks up to this many as it scans; more are selected from all
  // the entries seen.
  static constexpr int kRankedSearch = 16;
  // Mean entries per occupied grid cell.
  static constexpr int kPerCell = 2;
  // The limit term s = kLimitWeight rho max(0, kLimitMargin - mu).
  static constexpr double kLimitMargin = 0.15;
  static constexpr double kLimitWeight = 5.0;

  // A library of `entries` (1..kMaxEntries) configurations for the point
  // `point` of body `body`, keyed by its pose (pose = true) or its position.
  // Throws std::invalid_argument on a bad body, count or model.
  SeedLibrary(std::shared_ptr<const Model> model, int body, const Eigen::Vector3d& point, bool pose, int entries);
  ~SeedLibrary();
  SeedLibrary(const SeedLibrary&) = delete;
  SeedLibrary& operator=(const SeedLibrary&) = delete;

  // The library for the single goal of a problem, shared through a
  // process-wide cache (built on first use under a lock, kept while among
  // the 64 most recently used up to 2^23 entries in all, and handed out
  // again without a rebuild while anything else holds it); null when the
  // goals are not one position or pose goal of a valid body with a finite
  // point, or entries is out of range. A library built again after the
  // cache evicted and everything released it is counted (cacheStats) and,
  // the first time, reported on stderr: solves that cycle through more
  // libraries than the cache keeps would otherwise rebuild one per solve.
  static std::shared_ptr<const SeedLibrary> forGoals(const std::shared_ptr<const Model>& model,
                                                     const std::vector<Goal>& goals, int entries);
  struct CacheStats {
    long built = 0;    // libraries forGoals built
    long rebuilt = 0;  // of them, built again after eviction
  };
  static CacheStats cacheStats();

  int size() const;
  int nq() const;
  double rho() const;       // [m] the weight of the rotation coordinates
  double cellSize() const;  // [m] the grid's cell edge
  // The k (<= size()) entries nearest the goal's target, nearest first, into
  // out[0..k); returns how many were written (none for a target position
  // that is not finite). Up to kRankedSearch are ranked as the blocks are
  // scanned; more are selected (std::partial_sort) from candidates(), ties
  // in its order. The search runs on AVX2 + FMA where the CPU has
  // them (IKBENCH_BATCH_ISA=portable, read when a library is built, asks for
  // the build's baseline instead); the two differ in rounding only, so they
  // may order entries whose distances tie to within it differently.
  int nearest(const Goal& goal, int k, int* out) const;
  // Every entry of the shells around the goal's target that hold at least
  // k entries (the search's candidates), in the order the shells list them,
  // with its distance less the target's constant (what the search ranks
  // by); none for a target position that is not finite. nearest(k) is the
  // least k of them, ties in this order, for k > kRankedSearch.
  void candidates(const Goal& goal, int k, std::vector<float>& distance, std::vector<int>& entry) const;
  // The position of the least of distance[0..n), the first of equal ones;
  // -1 when none is below +inf (a start taken is set to +inf). Compiled
  // like the search.
  int least(const float* distance, int n) const;
  // Entry i's configuration (nq values) and the position of the point it
  // reaches (entries are stored in grid-cell order, not in draw order).
  const double* configuration(int i) const;
  Eigen::Vector3d position(int i) const;
  // The library's distance of entry i from the goal's target (see above),
  // as nearest ranks it: in single precision, by the search's own compiled
  // copy, plus the target's constant.
  double distance(int i, const Goal& goal) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The library's starts of one solve, taken in attempt order: the nearest
// SeedLibrary::kStarts entries, nearest first. They are found in stages, as
// they are asked for: the first alone when the first attempt starts from the
// library (start=library; most solves need no other), the nearest
// kNearStarts at the first restart (with the one already taken first), and
// the rest of the nearest kStarts only when those are used up: the few
// targets whose nearest starts all fail, where further library entries still
// converge more often than uniform draws. The rest are taken off the
// candidates' distances one restart at a time (the least, by a vector
// scan), so a solve pays for ordering only the starts it uses.
class LibraryStarts {
 public:
  LibraryStarts() = default;
  LibraryStarts(const SeedLibrary* library, const Goal* goal, StartMode start)
      : library_(library), goal_(goal), first_from_library_(library != nullptr && start == StartMode::kLibrary) {}
  // The configuration (nq values) attempt `attempt` starts from, asked for
  // in attempt order: the library's next entry, or null when the attempt
  // starts elsewhere (the first from the problem's start unless
  // start=library; later ones from uniform draws once the library's share is
  // used up, or without a library).
  const double* forAttempt(long attempt) {
    if (library_ == nullptr || (attempt == 0 && !first_from_library_)) return nullptr;
    if (next_ == count_ && stage_ < kFar) nextStage();
    if (next_ < count_) return library_->configuration(near_[next_++]);
    const int entry = nextFar();
    return entry >= 0 ? library_->configuration(entry) : nullptr;
  }

 private:
  static constexpr int kFar = 3;  // stage_ once the rest are searched
  void nextStage();
  int nextFar();  // the next of the rest, or -1

  const SeedLibrary* library_ = nullptr;
  const Goal* goal_ = nullptr;
  bool first_from_library_ = false;
  int stage_ = 0;  // searches run: 0, the first alone, the near ones, the rest (kFar)
  int near_[SeedLibrary::kNearStarts] = {};
  int count_ = 0;  // near entries found
  int next_ = 0;   // near entries taken
  // The rest: SeedLibrary::candidates; a start taken is set to +inf.
  std::vector<float> far_distance_;
  std::vector<int> far_entry_;
  int far_taken_ = 0;  // candidates taken (the near ones among them skipped)
};

}  // namespace ikbench
