// SeedLibrary: entries, their points and rotations in grid-cell order, the
// grid, and the process-wide cache that Solver::solve and solveBatch share.
#include "ikbench/solvers/seed_library.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <list>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/data.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/kinematics/rng.h"
#include "seed_search.h"

namespace ikbench {

namespace {

using seed_search::KeyBlock;
using seed_search::kBlock;

// The search kernels: AVX2 + FMA where the CPU has both, unless
// IKBENCH_BATCH_ISA=portable asks for the build's baseline (as it does of
// the batch kernel).
seed_search::Kernels selectKernels() {
  const char* env = std::getenv("IKBENCH_BATCH_ISA");
  const bool portable = env != nullptr && std::strcmp(env, "portable") == 0;
#if defined(__x86_64__) || defined(__i386__)
  if (!portable && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    const seed_search::Kernels k = seed_search::avx2Kernels();
    if (k.search != nullptr) return k;
  }
#endif
  return seed_search::portableKernels();
}

}  // namespace

struct SeedLibrary::Impl {
  std::shared_ptr<const Model> model;  // kept alive: the cache's key is its address
  int entries = 0;
  int nq = 0;
  double rho = 1.0;
  std::vector<double> q;  // entries x nq, cell order
  // The entries' keys (seed_search.h) in blocks of kBlock, cell order,
  // single precision (ample for ranking starts); the last block's lanes past
  // the entries are at infinity.
  std::vector<KeyBlock> blocks;
  // The grid: cells of size h from lo, cells[0..2] per axis; entries of cell
  // c are [start[c], start[c + 1]).
  Eigen::Vector3d lo = Eigen::Vector3d::Zero();
  double h = 1.0;
  int cells[3] = {1, 1, 1};
  std::vector<int> start;
  float w8 = 0.0f;  // 8 rho^2 for pose libraries, 0 for position libraries
  seed_search::Kernels kernels = selectKernels();

  int cellOf(double x, int axis) const {
    const double u = std::floor((x - lo[axis]) / h);
    return static_cast<int>(std::clamp(u, 0.0, static_cast<double>(cells[axis] - 1)));
  }
  float key(int a, int i) const { return blocks[static_cast<size_t>(i / kBlock)].row[a][i % kBlock]; }
  // The search's target for a goal.
  seed_search::Target target(const Goal& goal) const;
  template <class Add>
  bool shell(const int c[3], int ring, Add&& add) const;
  void shellCandidates(const seed_search::Target& target, const int c[3], int k, std::vector<float>& distance,
                       std::vector<int>& entry) const;
};

SeedLibrary::SeedLibrary(std::shared_ptr<const Model> model, int body, const Eigen::Vector3d& point, bool pose,
                         int entries)
    : impl_(std::make_unique<Impl>()) {
  if (!model) throw std::invalid_argument("seed library: no model");
  if (body < 0 || body >= model->numJoints())
    throw std::invalid_argument(
        fmt::format("seed library: body {} is not a body of the model (0..{})", body, model->numJoints() - 1));
  if (entries < 1 || entries > kMaxEntries)
    throw std::invalid_argument(
        fmt::format("seed library: {} entries is out of range: expected 1..{}", entries, kMaxEntries));
  if (!point.allFinite()) throw std::invalid_argument("seed library: the effector point is not finite");
  Impl& m = *impl_;
  m.model = std::move(model);
  m.entries = entries;
  const Model& mdl = *m.model;
  m.nq = mdl.nq();
  Rng rng(Rng::mix(kSeed, static_cast<std::uint64_t>(entries)));
  Data data(mdl);
  std::vector<double> q(static_cast<size_t>(entries) * m.nq);
  std::vector<Eigen::Vector3d> p(entries);
  std::vector<Eigen::Quaterniond> r(entries);
  // The entry's margin: its nearest approach to a limit of a joint that
  // moves the point, as a fraction of that joint's span (+inf without
  // finite limits).
  std::vector<double> margin(entries, INFINITY);
  struct Limited {
    int iq;
    double lo, span;
  };
  std::vector<Limited> limited;
  for (int j : mdl.supportingJoints(body)) {
    if (mdl.jointNq(j) != 1 || mdl.jointNv(j) != 1 || !mdl.hasFiniteLimits(mdl.idxV(j))) continue;
    const double lo = mdl.lowerLimits()[mdl.idxV(j)], hi = mdl.upperLimits()[mdl.idxV(j)];
    if (hi > lo) limited.push_back({mdl.idxQ(j), lo, hi - lo});
  }
  Eigen::Vector3d centroid = Eigen::Vector3d::Zero();
  Eigen::Vector3d lo = Eigen::Vector3d::Constant(INFINITY), hi = Eigen::Vector3d::Constant(-INFINITY);
  for (int i = 0; i < entries; ++i) {
    const Eigen::VectorXd qi = randomConfiguration(mdl, rng);
    std::copy(qi.data(), qi.data() + m.nq, q.begin() + static_cast<std::ptrdiff_t>(i) * m.nq);
    forwardKinematics(mdl, qi, data);
    for (const Limited& l : limited)
      margin[i] = std::min(margin[i], std::min(qi[l.iq] - l.lo, l.lo + l.span - qi[l.iq]) / l.span);
    const Pose3d& T = data.world_T_body[body];
    p[i] = T.act(point);
    r[i] = Eigen::Quaterniond(T.R).normalized();
    centroid += p[i];
    lo = lo.cwiseMin(p[i]);
    hi = hi.cwiseMax(p[i]);
  }
  if (!lo.allFinite() || !hi.allFinite())
    throw std::invalid_argument("seed library: the effector's forward kinematics is not finite");
  centroid /= entries;
  double radius = 0.0;
  for (const Eigen::Vector3d& x : p) radius = std::max(radius, (x - centroid).norm());
  // A quarter of the workspace's radius per radian; 1 m where the point
  // does not move (a library of one reachable pose).
  m.rho = radius > 0.0 ? 0.25 * radius : 1.0;

  // Cells of equal size h over the entries' bounding box, about kPerCell
  // entries per cell of the box (occupied cells hold more: a workspace
  // fills part of its box).
  const Eigen::Vector3d extent = hi - lo;
  const double volume = std::max(extent.x(), 1e-9) * std::max(extent.y(), 1e-9) * std::max(extent.z(), 1e-9);
  m.h = std::cbrt(volume * kPerCell / entries);
  if (!(m.h > 0.0)) m.h = 1.0;
  m.lo = lo;
  long total = 1;
  for (int a = 0; a < 3; ++a) {
    m.cells[a] = std::clamp(static_cast<int>(std::floor(extent[a] / m.h)) + 1, 1, 1 << 10);
    total *= m.cells[a];
  }
  // Counting sort of the entries by cell (draw order within a cell).
  std::vector<int> cell(entries);
  m.start.assign(static_cast<size_t>(total) + 1, 0);
  for (int i = 0; i < entries; ++i) {
    cell[i] = (m.cellOf(p[i].z(), 2) * m.cells[1] + m.cellOf(p[i].y(), 1)) * m.cells[0] + m.cellOf(p[i].x(), 0);
    ++m.start[cell[i] + 1];
  }
  for (long c = 0; c < total; ++c) m.start[c + 1] += m.start[c];
  std::vector<int> fill(m.start.begin(), m.start.end() - 1);
  m.blocks.resize(static_cast<size_t>((entries + kBlock - 1) / kBlock));
  for (KeyBlock& K : m.blocks)
    for (int a = 0; a < 8; ++a) std::fill_n(K.row[a], kBlock, a < seed_search::kQw ? INFINITY : 0.0f);
  m.w8 = pose ? static_cast<float>(8.0 * m.rho * m.rho) : 0.0f;
  m.q.resize(q.size());
  for (int i = 0; i < entries; ++i) {
    const size_t j = static_cast<size_t>(fill[cell[i]]++);
    const double short_of = pose ? kLimitWeight * m.rho * std::max(0.0, kLimitMargin - margin[i]) : 0.0;
    const double v[8] = {p[i].x(), p[i].y(), p[i].z(), p[i].squaredNorm() + short_of * short_of,
                         r[i].w(), r[i].x(), r[i].y(), r[i].z()};
    for (int a = 0; a < 8; ++a) m.blocks[j / kBlock].row[a][j % kBlock] = static_cast<float>(v[a]);
    std::copy_n(q.begin() + static_cast<std::ptrdiff_t>(i) * m.nq, m.nq,
                m.q.begin() + static_cast<std::ptrdiff_t>(j) * m.nq);
  }
}

SeedLibrary::~SeedLibrary() = default;

int SeedLibrary::size() const { return impl_->entries; }
int SeedLibrary::nq() const { return impl_->nq; }
double SeedLibrary::rho() const { return impl_->rho; }
double SeedLibrary::cellSize() const { return impl_->h; }

const double* SeedLibrary::configuration(int i) const {
  return impl_->q.data() + static_cast<size_t>(i) * static_cast<size_t>(impl_->nq);
}

Eigen::Vector3d SeedLibrary::position(int i) const { return {impl_->key(0, i), impl_->key(1, i), impl_->key(2, i)}; }

seed_search::Target SeedLibrary::Impl::target(const Goal& goal) const {
  const Eigen::Quaterniond q = Eigen::Quaterniond(goal.target_orientation).normalized();
  seed_search::Target t;
  for (int a = 0; a < 3; ++a) t.p2[a] = static_cast<float>(goal.target_position[a]) * 2.0f;
  t.r[0] = static_cast<float>(q.w());
  t.r[1] = static_cast<float>(q.x());
  t.r[2] = static_cast<float>(q.y());
  t.r[3] = static_cast<float>(q.z());
  t.w8 = w8;
  return t;
}

double SeedLibrary::distance(int i, const Goal& goal) const {
  const Impl& m = *impl_;
  float d[kBlock];
  m.kernels.block(m.blocks[static_cast<size_t>(i / kBlock)], m.target(goal), d);
  // The ranked value plus the target's constant |p_t|^2 + w8 (p_t as the
  // search has it, in single precision).
  return static_cast<double>(d[i % kBlock]) + goal.target_position.cast<float>().cast<double>().squaredNorm() + m.w8;
}

// Calls add(begin, end) for each run of entries of shell `ring` around cell
// c: ring 1 is the 3 x 3 x 3 cells around c (nine rows of three cells along
// x, one run each); a wider shell adds the rows outside the inner block and
// the two ends of the rows through it. Returns false when the previous ring
// already covered the grid (nothing added).
template <class Add>
bool SeedLibrary::Impl::shell(const int c[3], int ring, Add&& add) const {
  const bool covered = c[0] - ring + 1 <= 0 && c[1] - ring + 1 <= 0 && c[2] - ring + 1 <= 0 &&
                       c[0] + ring - 1 >= cells[0] - 1 && c[1] + ring - 1 >= cells[1] - 1 &&
                       c[2] + ring - 1 >= cells[2] - 1;
  if (ring > 1 && covered) return false;
  const int inner = ring - 1;
  const int x0 = std::max(c[0] - ring, 0), x1 = std::min(c[0] + ring, cells[0] - 1);
  for (int z = std::max(c[2] - ring, 0); z <= std::min(c[2] + ring, cells[2] - 1); ++z) {
    for (int y = std::max(c[1] - ring, 0); y <= std::min(c[1] + ring, cells[1] - 1); ++y) {
      const int row = (z * cells[1] + y) * cells[0];
      if (ring > 1 && std::abs(y - c[1]) <= inner && std::abs(z - c[2]) <= inner) {
        // The inner block's row was scanned: only this shell's two ends.
        if (c[0] - ring >= 0) add(start[row + c[0] - ring], start[row + c[0] - ring + 1]);
        if (c[0] + ring < cells[0]) add(start[row + c[0] + ring], start[row + c[0] + ring + 1]);
      } else {
        add(start[row + x0], start[row + x1 + 1]);
      }
    }
  }
  return true;
}

int SeedLibrary::nearest(const Goal& goal, int k, int* out) const {
  const Impl& m = *impl_;
  k = std::clamp(k, 0, m.entries);
  if (k == 0 || !goal.target_position.allFinite()) return 0;
  if (k > kRankedSearch) {
    // Many: the k least of the candidates, by (distance, position among
    // them).
    std::vector<float> distance;
    std::vector<int> entry;
    candidates(goal, k, distance, entry);
    std::vector<int> order(distance.size());
    std::iota(order.begin(), order.end(), 0);
    const int n = std::min(k, static_cast<int>(order.size()));
    std::partial_sort(order.begin(), order.begin() + n, order.end(), [&](int a, int b) {
      const float da = distance[static_cast<size_t>(a)], db = distance[static_cast<size_t>(b)];
      return da < db || (da == db && a < b);
    });
    for (int i = 0; i < n; ++i) out[i] = entry[static_cast<size_t>(order[static_cast<size_t>(i)])];
    return n;
  }
  // Ring 1, then wider shells while fewer than k entries have been seen,
  // ranked as the blocks are scanned, nine runs at a time, into the k best
  // so far.
  const seed_search::Target target = m.target(goal);
  int c[3];
  for (int a = 0; a < 3; ++a) c[a] = m.cellOf(goal.target_position[a], a);
  float d[kRankedSearch];
  seed_search::Best best;
  best.k = k;
  best.d = d;
  best.out = out;
  seed_search::Runs runs;
  auto add = [&](int b, int e) {
    runs.run[runs.count][0] = b;
    runs.run[runs.count][1] = e;
    if (++runs.count == seed_search::Runs::kMax) {
      m.kernels.search(m.blocks.data(), target, runs, best);
      runs.count = 0;
    }
  };
  for (int ring = 1; ring == 1 || best.found < k; ++ring) {
    runs.count = 0;
    if (!m.shell(c, ring, add)) break;
    if (runs.count > 0) m.kernels.search(m.blocks.data(), target, runs, best);
  }
  return best.found;
}

void SeedLibrary::candidates(const Goal& goal, int k, std::vector<float>& distance, std::vector<int>& entry) const {
  const Impl& m = *impl_;
  distance.clear();
  entry.clear();
  if (k <= 0 || !goal.target_position.allFinite()) return;
  int c[3];
  for (int a = 0; a < 3; ++a) c[a] = m.cellOf(goal.target_position[a], a);
  m.shellCandidates(m.target(goal), c, k, distance, entry);
}

int SeedLibrary::least(const float* distance, int n) const { return n > 0 ? impl_->kernels.least(distance, n) : -1; }

// Every entry of ring 1 and the wider shells until at least k are in, in
// the order the shells list them, with its ranked distance.
void SeedLibrary::Impl::shellCandidates(const seed_search::Target& target, const int c[3], int k,
                                        std::vector<float>& distance, std::vector<int>& entry) const {
  seed_search::Runs runs;
  auto flush = [&] {
    size_t at = distance.size(), n = at;
    for (int i = 0; i < runs.count; ++i) n += static_cast<size_t>(runs.run[i][1] - runs.run[i][0]);
    distance.resize(n);
    entry.resize(n);
    kernels.distances(blocks.data(), target, runs, distance.data() + at);
    for (int i = 0; i < runs.count; ++i)
      for (int j = runs.run[i][0]; j < runs.run[i][1]; ++j) entry[at++] = j;
    runs.count = 0;
  };
  auto add = [&](int b, int e) {
    if (b >= e) return;
    runs.run[runs.count][0] = b;
    runs.run[runs.count][1] = e;
    if (++runs.count == seed_search::Runs::kMax) flush();
  };
  for (int ring = 1; ring == 1 || distance.size() < static_cast<size_t>(k); ++ring) {
    const bool more = shell(c, ring, add);
    flush();
    if (!more) break;
  }
}

void LibraryStarts::nextStage() {
  constexpr int kNear = SeedLibrary::kNearStarts;
  if (stage_ == 0 && first_from_library_) {
    // The first attempt's start alone.
    count_ = library_->nearest(*goal_, 1, near_);
    stage_ = count_ == 1 ? 1 : kFar;
  } else if (stage_ <= 1) {
    // The nearest kNear, with the one already taken (stage 1) first: it is
    // their first unless a wider search found nearer ones (nearest stops
    // widening once it has k).
    const int taken = near_[0];
    count_ = library_->nearest(*goal_, kNear, near_);
    if (stage_ == 1) {
      int at = 0;
      while (at < count_ && near_[at] != taken) ++at;
      if (at == count_) at = count_ < kNear ? count_++ : count_ - 1;
      for (; at > 0; --at) near_[at] = near_[at - 1];
      near_[0] = taken;
    }
    stage_ = count_ == kNear ? 2 : kFar;  // fewer: the library has no more
  } else {
    // The rest: every candidate of the shells holding kStarts, taken off
    // one at a time by the least distance.
    library_->candidates(*goal_, SeedLibrary::kStarts, far_distance_, far_entry_);
    stage_ = kFar;
  }
}

int LibraryStarts::nextFar() {
  while (far_taken_ < SeedLibrary::kStarts) {
    const int at = library_->least(far_distance_.data(), static_cast<int>(far_distance_.size()));
    if (at < 0) return -1;
    far_distance_[static_cast<size_t>(at)] = INFINITY;
    ++far_taken_;
    const int entry = far_entry_[static_cast<size_t>(at)];
    if (std::find(near_, near_ + count_, entry) == near_ + count_) return entry;
  }
  return -1;
}

// ------------------------------------------------------------- cache --

namespace {

struct CacheKey {
  const Model* model;
  int body;
  double px, py, pz;
  bool pose;
  int entries;
  bool operator==(const CacheKey& o) const {
    return model == o.model && body == o.body && px == o.px && py == o.py && pz == o.pz && pose == o.pose &&
           entries == o.entries;
  }
};

struct CacheEntry {
  CacheKey key;
  std::shared_ptr<const SeedLibrary> library;  // holds its model: the key's pointer stays unique
};

// Every library the cache built and whose model is alive: one that was
// evicted but is still held elsewhere (by a caller, a batch, a running
// solve) is handed out again instead of built twice; one built again after
// it was evicted and released counts as rebuilt. A record whose model has
// gone is dropped (its address may come back as another model's).
struct BuiltRecord {
  CacheKey key;
  std::weak_ptr<const SeedLibrary> library;
  std::weak_ptr<const Model> model;
};

// The cache keeps the most recently used libraries up to this many entries
// in all (about 700 MB for 7-DOF models) and at most kCacheLibraries.
constexpr long kCacheEntries = 1L << 23;
constexpr size_t kCacheLibraries = 64;

std::mutex cache_mutex;
std::list<CacheEntry> cache;  // most recently used first
std::vector<BuiltRecord> built;
SeedLibrary::CacheStats cache_stats;

}  // namespace

SeedLibrary::CacheStats SeedLibrary::cacheStats() {
  std::lock_guard<std::mutex> lock(cache_mutex);
  return cache_stats;
}

std::shared_ptr<const SeedLibrary> SeedLibrary::forGoals(const std::shared_ptr<const Model>& model,
                                                         const std::vector<Goal>& goals, int entries) {
  if (!model || goals.size() != 1 || goals.front().kind == GoalKind::kOrientation || !isPointTarget(goals.front()))
    return nullptr;
  const Goal& g = goals.front();
  if (g.body < 0 || g.body >= model->numJoints() || !g.point.allFinite() || entries < 1 || entries > kMaxEntries)
    return nullptr;
  const CacheKey key{model.get(), g.body, g.point.x(), g.point.y(), g.point.z(), g.kind == GoalKind::kPose, entries};
  // The last library this thread asked for, without the lock.
  thread_local CacheEntry last{};
  if (last.library && last.key == key) return last.library;
  std::lock_guard<std::mutex> lock(cache_mutex);
  for (auto it = cache.begin(); it != cache.end(); ++it)
    if (it->key == key) {
      cache.splice(cache.begin(), cache, it);
      last = cache.front();
      return last.library;
    }
  std::erase_if(built, [](const BuiltRecord& r) { return r.model.expired(); });
  auto record = std::find_if(built.begin(), built.end(), [&](const BuiltRecord& r) { return r.key == key; });
  std::shared_ptr<const SeedLibrary> library = record != built.end() ? record->library.lock() : nullptr;
  if (!library) {
    library = std::make_shared<const SeedLibrary>(model, g.body, g.point, key.pose, entries);
    ++cache_stats.built;
    if (record != built.end()) {
      ++cache_stats.rebuilt;
      record->library = library;
      if (cache_stats.rebuilt == 1)
        std::fprintf(stderr,
                     "ikbench: a seed library of %d entries was built again after the library cache evicted it: "
                     "the cache keeps the most recently used libraries up to %ld entries in all (at most %zu); "
                     "use fewer or smaller libraries, or hold them (SeedLibrary::forGoals) while solving\n",
                     entries, kCacheEntries, kCacheLibraries);
    } else {
      built.push_back({key, library, model});
    }
  }
  cache.push_front({key, library});
  long total = 0;
  for (const CacheEntry& e : cache) total += e.key.entries;
  while (cache.size() > 1 && (total > kCacheEntries || cache.size() > kCacheLibraries)) {
    total -= cache.back().key.entries;
    cache.pop_back();
  }
  last = cache.front();
  return library;
}

}  // namespace ikbench
