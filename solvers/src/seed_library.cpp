// SeedLibrary: entries, their points and rotations in grid-cell order, the
// grid, and the process-wide cache that Solver::solve and solveBatch share.
#include "ikbench/solvers/seed_library.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <list>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/data.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/kinematics/rng.h"

namespace ikbench {

namespace {

// Four floats in one vector register (GCC/clang vector extensions: SSE2 on
// x86-64, whatever the target has elsewhere).
using V4 = float __attribute__((vector_size(16)));

// The library's distance |p - p_t|^2 + w8 (1 - (q . q_t)^2), w8 = 8 rho^2
// (0 for position libraries), of a key (point x, y, z and unit quaternion
// w, a, b, c) from a target (tp, tr): one entry (T = float) or four at once
// (T = V4).
template <class T>
T keyDistance(T x, T y, T z, T w, T a, T b, T c, const T tp[3], const T tr[4], T w8, T one) {
  const T dx = x - tp[0], dy = y - tp[1], dz = z - tp[2];
  const T dot = w * tr[0] + a * tr[1] + b * tr[2] + c * tr[3];
  return dx * dx + dy * dy + dz * dz + w8 * (one - dot * dot);
}

}  // namespace

struct SeedLibrary::Impl {
  std::shared_ptr<const Model> model;  // kept alive: the cache's key is its address
  int entries = 0;
  int nq = 0;
  double rho = 1.0;
  std::vector<double> q;  // entries x nq, cell order
  // The entries' points and rotations (unit quaternions w, x, y, z), one
  // array per coordinate, cell order, single precision (ample for ranking
  // starts), each padded by kPad entries (at infinity), so that a query may
  // read whole vectors past the end of a run.
  static constexpr int kPad = 4;
  std::vector<float> key[7];
  // The grid: cells of size h from lo, cells[0..2] per axis; entries of cell
  // c are [start[c], start[c + 1]).
  Eigen::Vector3d lo = Eigen::Vector3d::Zero();
  double h = 1.0;
  int cells[3] = {1, 1, 1};
  std::vector<int> start;

  int cellOf(double x, int axis) const {
    const double u = std::floor((x - lo[axis]) / h);
    return static_cast<int>(std::clamp(u, 0.0, static_cast<double>(cells[axis] - 1)));
  }
  // The distance of entry i from a target at p with rotation r (unit).
  float distance(int i, const float p[3], const float r[4]) const {
    const size_t e = static_cast<size_t>(i);
    return keyDistance<float>(key[0][e], key[1][e], key[2][e], key[3][e], key[4][e], key[5][e], key[6][e], p, r, w8,
                              1.0f);
  }
  float w8 = 0.0f;  // 8 rho^2 for pose libraries, 0 for position libraries
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
  Eigen::Vector3d centroid = Eigen::Vector3d::Zero();
  Eigen::Vector3d lo = Eigen::Vector3d::Constant(INFINITY), hi = Eigen::Vector3d::Constant(-INFINITY);
  for (int i = 0; i < entries; ++i) {
    const Eigen::VectorXd qi = randomConfiguration(mdl, rng);
    std::copy(qi.data(), qi.data() + m.nq, q.begin() + static_cast<std::ptrdiff_t>(i) * m.nq);
    forwardKinematics(mdl, qi, data);
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
  for (int a = 0; a < 7; ++a) m.key[a].assign(static_cast<size_t>(entries) + Impl::kPad, a < 3 ? INFINITY : 0.0f);
  m.w8 = pose ? static_cast<float>(8.0 * m.rho * m.rho) : 0.0f;
  m.q.resize(q.size());
  for (int i = 0; i < entries; ++i) {
    const size_t j = static_cast<size_t>(fill[cell[i]]++);
    const double v[7] = {p[i].x(), p[i].y(), p[i].z(), r[i].w(), r[i].x(), r[i].y(), r[i].z()};
    for (int a = 0; a < 7; ++a) m.key[a][j] = static_cast<float>(v[a]);
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

Eigen::Vector3d SeedLibrary::position(int i) const {
  const size_t e = static_cast<size_t>(i);
  return {impl_->key[0][e], impl_->key[1][e], impl_->key[2][e]};
}

namespace {

// A goal's target as the library's key: point, and rotation as a unit
// quaternion (w, x, y, z).
void targetKey(const Goal& goal, float p[3], float r[4]) {
  const Eigen::Quaterniond q = Eigen::Quaterniond(goal.target_orientation).normalized();
  for (int a = 0; a < 3; ++a) p[a] = static_cast<float>(goal.target_position[a]);
  r[0] = static_cast<float>(q.w());
  r[1] = static_cast<float>(q.x());
  r[2] = static_cast<float>(q.y());
  r[3] = static_cast<float>(q.z());
}

}  // namespace

double SeedLibrary::distance(int i, const Goal& goal) const {
  float p[3], r[4];
  targetKey(goal, p, r);
  return impl_->distance(i, p, r);
}

int SeedLibrary::nearest(const Goal& goal, int k, int* out) const {
  const Impl& m = *impl_;
  k = std::clamp(k, 0, m.entries);
  if (k == 0) return 0;
  float tp[3], tr[4];
  targetKey(goal, tp, tr);
  const int c[3] = {m.cellOf(goal.target_position.x(), 0), m.cellOf(goal.target_position.y(), 1),
                    m.cellOf(goal.target_position.z(), 2)};
  // The k best so far, sorted by distance (ties keep the earlier entry).
  float stack_d[kStarts];
  std::vector<float> heap_d;
  if (k > kStarts) heap_d.resize(static_cast<size_t>(k));
  float* best_d = k > kStarts ? heap_d.data() : stack_d;
  int found = 0;
  float worst = INFINITY;  // best_d[k - 1] once k are found
  // Entries [b, e): their distances four at a time (whole vectors, reading
  // up to three entries past e), then the few that beat the k-th best are
  // inserted.
  auto load = [](const float* x) {
    V4 v;
    std::memcpy(&v, x, sizeof v);
    return v;
  };
  auto splat = [](float x) { return V4{x, x, x, x}; };
  const V4 tpv[3] = {splat(tp[0]), splat(tp[1]), splat(tp[2])};
  const V4 trv[4] = {splat(tr[0]), splat(tr[1]), splat(tr[2]), splat(tr[3])};
  const V4 w8 = splat(m.w8), one = splat(1.0f);
  const float *kx = m.key[0].data(), *ky = m.key[1].data(), *kz = m.key[2].data(), *kw = m.key[3].data(),
              *ka = m.key[4].data(), *kb = m.key[5].data(), *kc = m.key[6].data();
  V4 worst4 = splat(worst);
  // Which of four distances beat the k-th best, as bits.
  auto better = [&](const V4& d) {
#if defined(__SSE__)
    return __builtin_ia32_movmskps((V4)(d < worst4));  // the lanes' sign bits
#else
    int bits = 0;
    for (int j = 0; j < 4; ++j) bits |= (d[j] < worst) << j;
    return bits;
#endif
  };
  auto scan = [&](int b, int e) {
    for (; b < e; b += 4) {
      // The lanes past the run (entries of the next cell, which another run
      // may hold too, or the padding) are masked out.
      const V4 d = keyDistance<V4>(load(kx + b), load(ky + b), load(kz + b), load(kw + b), load(ka + b), load(kb + b),
                                   load(kc + b), tpv, trv, w8, one);
      int bits = better(d) & ((1 << std::min(4, e - b)) - 1);
      while (bits != 0) {
        const int j = __builtin_ctz(static_cast<unsigned>(bits));
        bits &= bits - 1;
        const float dj = d[j];
        if (!(dj < worst)) continue;
        int at = found < k ? found++ : k - 1;
        while (at > 0 && dj < best_d[at - 1]) {
          best_d[at] = best_d[at - 1];
          out[at] = out[at - 1];
          --at;
        }
        best_d[at] = dj;
        out[at] = b + j;
        if (found == k) {
          worst = best_d[k - 1];
          worst4 = splat(worst);
        }
      }
    }
  };
  // Ring 1, the 3 x 3 x 3 block around the target's cell: nine rows of
  // three cells along x, each one run of entries. The runs' rows are
  // requested from memory before any is read (a library is larger than the
  // caches; the misses overlap instead of queueing).
  {
    int runs[9][2];
    int count = 0;
    const int x0 = std::max(c[0] - 1, 0), x1 = std::min(c[0] + 1, m.cells[0] - 1);
    for (int z = std::max(c[2] - 1, 0); z <= std::min(c[2] + 1, m.cells[2] - 1); ++z)
      for (int y = std::max(c[1] - 1, 0); y <= std::min(c[1] + 1, m.cells[1] - 1); ++y) {
        const int row = (z * m.cells[1] + y) * m.cells[0];
        runs[count][0] = m.start[row + x0];
        runs[count][1] = m.start[row + x1 + 1];
        ++count;
      }
    for (int r = 0; r < count; ++r)
      for (int i = runs[r][0]; i < runs[r][1]; i += 16)
        for (const float* k_a : {kx, ky, kz, kw, ka, kb, kc}) __builtin_prefetch(k_a + i);
    for (int r = 0; r < count; ++r) scan(runs[r][0], runs[r][1]);
  }
  // Wider shells while fewer than k entries have been seen.
  for (int ring = 2; found < k; ++ring) {
    const bool covers = c[0] - ring + 1 <= 0 && c[1] - ring + 1 <= 0 && c[2] - ring + 1 <= 0 &&
                        c[0] + ring - 1 >= m.cells[0] - 1 && c[1] + ring - 1 >= m.cells[1] - 1 &&
                        c[2] + ring - 1 >= m.cells[2] - 1;
    if (covers) break;  // the previous ring covered the grid
    const int inner = ring - 1;
    const int x0 = std::max(c[0] - ring, 0), x1 = std::min(c[0] + ring, m.cells[0] - 1);
    for (int z = std::max(c[2] - ring, 0); z <= std::min(c[2] + ring, m.cells[2] - 1); ++z) {
      for (int y = std::max(c[1] - ring, 0); y <= std::min(c[1] + ring, m.cells[1] - 1); ++y) {
        const int row = (z * m.cells[1] + y) * m.cells[0];
        if (std::abs(y - c[1]) <= inner && std::abs(z - c[2]) <= inner) {
          // The inner block's row was scanned: only this shell's two ends.
          if (c[0] - ring >= 0) scan(m.start[row + c[0] - ring], m.start[row + c[0] - ring + 1]);
          if (c[0] + ring < m.cells[0]) scan(m.start[row + c[0] + ring], m.start[row + c[0] + ring + 1]);
        } else {
          scan(m.start[row + x0], m.start[row + x1 + 1]);
        }
      }
    }
  }
  return found;
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

// The cache keeps the most recently used libraries up to this many entries
// in all (about 700 MB for 7-DOF models) and at most kCacheLibraries.
constexpr long kCacheEntries = 1L << 23;
constexpr size_t kCacheLibraries = 64;

}  // namespace

std::shared_ptr<const SeedLibrary> SeedLibrary::forGoals(const std::shared_ptr<const Model>& model,
                                                         const std::vector<Goal>& goals, int entries) {
  if (!model || goals.size() != 1 || goals.front().kind == GoalKind::kOrientation) return nullptr;
  const Goal& g = goals.front();
  if (g.body < 0 || g.body >= model->numJoints() || !g.point.allFinite() || entries < 1 || entries > kMaxEntries)
    return nullptr;
  const CacheKey key{model.get(), g.body, g.point.x(), g.point.y(), g.point.z(), g.kind == GoalKind::kPose, entries};
  // The last library this thread asked for, without the lock.
  thread_local CacheEntry last{};
  if (last.library && last.key == key) return last.library;
  static std::mutex mutex;
  static std::list<CacheEntry> cache;  // most recently used first
  std::lock_guard<std::mutex> lock(mutex);
  for (auto it = cache.begin(); it != cache.end(); ++it)
    if (it->key == key) {
      cache.splice(cache.begin(), cache, it);
      last = cache.front();
      return last.library;
    }
  auto library = std::make_shared<const SeedLibrary>(model, g.body, g.point, key.pose, entries);
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
