// SeedLibrary: entries, their points and rotations in grid-cell order, the
// grid, and the process-wide cache that Solver::solve and solveBatch share.
#include "ikbench/solvers/seed_library.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
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

// Eight floats: one row of a key block. Without AVX the compiler splits each
// operation into two SSE2 ones; searchAvx below compiles the same code for
// AVX registers. Neither target has FMA, so both round every operation
// alike and rank entries identically (tests/seed_library_test.cpp). Every
// function that takes or returns a V8 is inlined into one of the two, so
// GCC's note that such a function's ABI differs between them (-Wpsabi)
// does not apply.
#pragma GCC diagnostic ignored "-Wpsabi"
using V8 = float __attribute__((vector_size(32)));
using V4 = float __attribute__((vector_size(16)));
constexpr int kBlock = 8;  // entries per key block

// The library's distance |p - p_t|^2 + w8 (1 - (q . q_t)^2), w8 = 8 rho^2
// (0 for position libraries), of a key (point x, y, z and unit quaternion
// w, a, b, c) from a target (tp, tr): one entry (T = float) or a block
// (T = V8).
template <class T>
__attribute__((always_inline)) inline T keyDistance(T x, T y, T z, T w, T a, T b, T c, const T tp[3], const T tr[4],
                                                    T w8, T one) {
  const T dx = x - tp[0], dy = y - tp[1], dz = z - tp[2];
  const T dot = w * tr[0] + a * tr[1] + b * tr[2] + c * tr[3];
  return dx * dx + dy * dy + dz * dz + w8 * (one - dot * dot);
}

// The keys of kBlock entries: row a holds coordinate a (x, y, z, w, qx, qy,
// qz) of each. A run of entries spans consecutive blocks, so a search reads
// a few contiguous cache lines per run instead of one or two in each of
// seven arrays.
struct alignas(32) KeyBlock {
  float row[7][kBlock];
};

// The runs of entries a search ranks and the target they are ranked against.
struct Query {
  static constexpr int kMaxRuns = 9;
  float tp[3], tr[4];
  int runs[kMaxRuns][2];
  int count = 0;
};

// The k best so far, sorted by distance (ties keep the earlier entry).
struct Best {
  int k = 0;
  int found = 0;
  float worst = INFINITY;  // d[k - 1] once k are found
  float* d = nullptr;
  int* out = nullptr;
};

// Inserts the lanes `bits` of block `block` (distances dist) that still beat
// the k-th best. Inlined into each search (a call from AVX code into SSE
// code would pay the processor's transition between the two).
__attribute__((always_inline)) inline void insertLanes(Best& best, const float* dist, unsigned bits, int block) {
  while (bits != 0) {
    const int j = __builtin_ctz(bits);
    bits &= bits - 1;
    const float dj = dist[j];
    if (!(dj < best.worst)) continue;
    int at = best.found < best.k ? best.found++ : best.k - 1;
    while (at > 0 && dj < best.d[at - 1]) {
      best.d[at] = best.d[at - 1];
      best.out[at] = best.out[at - 1];
      --at;
    }
    best.d[at] = dj;
    best.out[at] = block * kBlock + j;
    if (best.found == best.k) best.worst = best.d[best.k - 1];
  }
}

// Ranks the entries of q's runs into best, a block at a time; lanes outside
// a run (the neighbouring cells' entries, which another run may hold too)
// are masked out.
__attribute__((always_inline)) inline void searchRuns(const KeyBlock* blocks, const Query& q, float w8s, Best& best) {
  // Broadcasts by adding to a zero vector (no helper returning a vector
  // crosses the two targets' ABIs).
  const V8 zero = {};
  const V8 tp[3] = {zero + q.tp[0], zero + q.tp[1], zero + q.tp[2]};
  const V8 tr[4] = {zero + q.tr[0], zero + q.tr[1], zero + q.tr[2], zero + q.tr[3]};
  const V8 w8 = zero + w8s, one = zero + 1.0f;
  V8 worst = zero + best.worst;
  for (int r = 0; r < q.count; ++r) {
    const int begin = q.runs[r][0], end = q.runs[r][1];
    if (begin >= end) continue;
    const int first = begin / kBlock, last = (end - 1) / kBlock;
    for (int blk = first; blk <= last; ++blk) {
      const KeyBlock& K = blocks[blk];
      V8 x, y, z, w, a, b, c;
      std::memcpy(&x, K.row[0], sizeof x);
      std::memcpy(&y, K.row[1], sizeof y);
      std::memcpy(&z, K.row[2], sizeof z);
      std::memcpy(&w, K.row[3], sizeof w);
      std::memcpy(&a, K.row[4], sizeof a);
      std::memcpy(&b, K.row[5], sizeof b);
      std::memcpy(&c, K.row[6], sizeof c);
      const V8 d = keyDistance<V8>(x, y, z, w, a, b, c, tp, tr, w8, one);
      // Which lanes beat the k-th best, as bits (the lanes' sign bits).
      const auto less = d < worst;
      V4 lo, hi;
      std::memcpy(&lo, &less, sizeof lo);
      std::memcpy(&hi, reinterpret_cast<const char*>(&less) + sizeof lo, sizeof hi);
#if defined(__SSE__)
      unsigned bits = static_cast<unsigned>(__builtin_ia32_movmskps(lo) | __builtin_ia32_movmskps(hi) << 4);
#else
      unsigned bits = 0;
      for (int j = 0; j < kBlock; ++j) bits |= static_cast<unsigned>(d[j] < best.worst) << j;
#endif
      if (blk == first) bits &= ~0u << (begin - first * kBlock);
      if (blk == last) bits &= (1u << (end - last * kBlock)) - 1u;
      if (__builtin_expect(bits == 0, 1)) continue;
      float dist[kBlock];
      std::memcpy(dist, &d, sizeof dist);
      insertLanes(best, dist, bits, blk);
      worst = zero + best.worst;
    }
  }
}

void searchPortable(const KeyBlock* blocks, const Query& q, float w8, Best& best) { searchRuns(blocks, q, w8, best); }

#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx"))) void searchAvx(const KeyBlock* blocks, const Query& q, float w8, Best& best) {
  searchRuns(blocks, q, w8, best);
}
#endif

using SearchFn = void (*)(const KeyBlock*, const Query&, float, Best&);

// AVX where the CPU has it, unless IKBENCH_BATCH_ISA=portable asks for the
// build's baseline (as it does of the batch kernel).
SearchFn selectSearch() {
  const char* env = std::getenv("IKBENCH_BATCH_ISA");
  if (env != nullptr && std::strcmp(env, "portable") == 0) return searchPortable;
#if defined(__x86_64__) || defined(__i386__)
  if (__builtin_cpu_supports("avx")) return searchAvx;
#endif
  return searchPortable;
}

}  // namespace

struct SeedLibrary::Impl {
  std::shared_ptr<const Model> model;  // kept alive: the cache's key is its address
  int entries = 0;
  int nq = 0;
  double rho = 1.0;
  std::vector<double> q;  // entries x nq, cell order
  // The entries' points and rotations (unit quaternions w, x, y, z) in
  // blocks of kBlock, cell order, single precision (ample for ranking
  // starts); the last block's lanes past the entries are at infinity.
  std::vector<KeyBlock> blocks;
  // The grid: cells of size h from lo, cells[0..2] per axis; entries of cell
  // c are [start[c], start[c + 1]).
  Eigen::Vector3d lo = Eigen::Vector3d::Zero();
  double h = 1.0;
  int cells[3] = {1, 1, 1};
  std::vector<int> start;
  float w8 = 0.0f;  // 8 rho^2 for pose libraries, 0 for position libraries
  SearchFn search = selectSearch();

  int cellOf(double x, int axis) const {
    const double u = std::floor((x - lo[axis]) / h);
    return static_cast<int>(std::clamp(u, 0.0, static_cast<double>(cells[axis] - 1)));
  }
  float key(int a, int i) const { return blocks[static_cast<size_t>(i / kBlock)].row[a][i % kBlock]; }
  // The distance of entry i from a target at p with rotation r (unit).
  float distance(int i, const float p[3], const float r[4]) const {
    return keyDistance<float>(key(0, i), key(1, i), key(2, i), key(3, i), key(4, i), key(5, i), key(6, i), p, r, w8,
                              1.0f);
  }
  // The target's cell and the runs of ring 1 (the 3 x 3 x 3 cells around
  // it: nine rows of three cells along x, each one run of entries).
  void ringOne(const Eigen::Vector3d& target, int c[3], Query& query) const;
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
  m.blocks.resize(static_cast<size_t>((entries + kBlock - 1) / kBlock));
  for (KeyBlock& K : m.blocks)
    for (int a = 0; a < 7; ++a) std::fill_n(K.row[a], kBlock, a < 3 ? INFINITY : 0.0f);
  m.w8 = pose ? static_cast<float>(8.0 * m.rho * m.rho) : 0.0f;
  m.q.resize(q.size());
  for (int i = 0; i < entries; ++i) {
    const size_t j = static_cast<size_t>(fill[cell[i]]++);
    const double v[7] = {p[i].x(), p[i].y(), p[i].z(), r[i].w(), r[i].x(), r[i].y(), r[i].z()};
    for (int a = 0; a < 7; ++a) m.blocks[j / kBlock].row[a][j % kBlock] = static_cast<float>(v[a]);
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

void SeedLibrary::Impl::ringOne(const Eigen::Vector3d& target, int c[3], Query& query) const {
  for (int a = 0; a < 3; ++a) c[a] = cellOf(target[a], a);
  query.count = 0;
  const int x0 = std::max(c[0] - 1, 0), x1 = std::min(c[0] + 1, cells[0] - 1);
  for (int z = std::max(c[2] - 1, 0); z <= std::min(c[2] + 1, cells[2] - 1); ++z)
    for (int y = std::max(c[1] - 1, 0); y <= std::min(c[1] + 1, cells[1] - 1); ++y) {
      const int row = (z * cells[1] + y) * cells[0];
      query.runs[query.count][0] = start[row + x0];
      query.runs[query.count][1] = start[row + x1 + 1];
      ++query.count;
    }
}

int SeedLibrary::nearest(const Goal& goal, int k, int* out) const {
  const Impl& m = *impl_;
  k = std::clamp(k, 0, m.entries);
  if (k == 0 || !goal.target_position.allFinite()) return 0;
  float stack_d[kStarts];
  std::vector<float> heap_d;
  if (k > kStarts) heap_d.resize(static_cast<size_t>(k));
  Best best;
  best.k = k;
  best.d = k > kStarts ? heap_d.data() : stack_d;
  best.out = out;
  int c[3];
  Query query;
  targetKey(goal, query.tp, query.tr);
  m.ringOne(goal.target_position, c, query);
  m.search(m.blocks.data(), query, m.w8, best);
  // Wider shells while fewer than k entries have been seen, up to nine runs
  // at a time.
  for (int ring = 2; best.found < k; ++ring) {
    const bool covers = c[0] - ring + 1 <= 0 && c[1] - ring + 1 <= 0 && c[2] - ring + 1 <= 0 &&
                        c[0] + ring - 1 >= m.cells[0] - 1 && c[1] + ring - 1 >= m.cells[1] - 1 &&
                        c[2] + ring - 1 >= m.cells[2] - 1;
    if (covers) break;  // the previous ring covered the grid
    query.count = 0;
    auto add = [&](int b, int e) {
      query.runs[query.count][0] = b;
      query.runs[query.count][1] = e;
      if (++query.count == Query::kMaxRuns) {
        m.search(m.blocks.data(), query, m.w8, best);
        query.count = 0;
      }
    };
    const int inner = ring - 1;
    const int x0 = std::max(c[0] - ring, 0), x1 = std::min(c[0] + ring, m.cells[0] - 1);
    for (int z = std::max(c[2] - ring, 0); z <= std::min(c[2] + ring, m.cells[2] - 1); ++z) {
      for (int y = std::max(c[1] - ring, 0); y <= std::min(c[1] + ring, m.cells[1] - 1); ++y) {
        const int row = (z * m.cells[1] + y) * m.cells[0];
        if (std::abs(y - c[1]) <= inner && std::abs(z - c[2]) <= inner) {
          // The inner block's row was scanned: only this shell's two ends.
          if (c[0] - ring >= 0) add(m.start[row + c[0] - ring], m.start[row + c[0] - ring + 1]);
          if (c[0] + ring < m.cells[0]) add(m.start[row + c[0] + ring], m.start[row + c[0] + ring + 1]);
        } else {
          add(m.start[row + x0], m.start[row + x1 + 1]);
        }
      }
    }
    m.search(m.blocks.data(), query, m.w8, best);
  }
  return best.found;
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
