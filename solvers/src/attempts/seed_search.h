// The seed library's search kernel (SeedLibrary::nearest): the distances of
// blocks of eight entries from a target, ranked into the k nearest, compiled
// twice like the batch kernel: for AVX2 + FMA (seed_search_avx2.cpp, one
// ymm register per row of eight) and for the build's baseline
// (seed_search_portable.cpp). The two round differently (fused
// multiply-adds), so entries whose distances tie to within rounding may come
// out in another order; each copy ranks with the distance it reports.
#pragma once

namespace ikbench::seed_search {

constexpr int kBlock = 8;  // entries per key block

// The keys of kBlock entries, one row per coordinate: the point x, y, z,
// its squared norm, and the rotation as a unit quaternion w, x, y, z. A run
// of entries spans consecutive blocks: a few contiguous cache lines.
struct alignas(32) KeyBlock {
  float row[8][kBlock];
};
enum Row { kX, kY, kZ, kNorm2, kQw, kQx, kQy, kQz };

// A target as the search uses it. The distance of an entry (p, q),
//   |p - p_t|^2 + w8 (1 - (q . q_t)^2),
// is ranked as |p|^2 - 2 p . p_t - w8 (q . q_t)^2, which differs from it by
// |p_t|^2 + w8, the same for every entry.
struct Target {
  float p2[3];  // 2 p_t
  float r[4];   // q_t (w, x, y, z)
  float w8;     // 8 rho^2 (pose libraries), 0 (position libraries)
};

// Runs of entries [begin, end), in increasing order.
struct Runs {
  static constexpr int kMax = 9;
  int run[kMax][2];
  int count = 0;
};

// The k best so far, sorted by distance (ties keep the earlier entry).
struct Best {
  int k = 0;
  int found = 0;
  float worst = __builtin_inff();  // d[k - 1] once k are found
  float* d = nullptr;
  int* out = nullptr;
};

// The k best in best's own arrays, sorted: an insertion shifts the worse
// ones (the search's ranking where k is above eight or the target has no
// AVX2). insert() is called before best.found counts the entry.
struct ScalarTop {
  Best& b;
  explicit ScalarTop(Best& best) : b(best) {}
  void insert(float dj, int entry) {
    int at = b.found < b.k ? b.found : b.k - 1;
    while (at > 0 && dj < b.d[at - 1]) {
      b.d[at] = b.d[at - 1];
      b.out[at] = b.out[at - 1];
      --at;
    }
    b.d[at] = dj;
    b.out[at] = entry;
  }
  float worst() const { return b.d[b.k - 1]; }
  void store() {}
};

// Ranks the entries of the runs into best.
using SearchFn = void (*)(const KeyBlock* blocks, const Target& target, const Runs& runs, Best& best);
// The ranked distances of one block's eight entries.
using BlockFn = void (*)(const KeyBlock& block, const Target& target, float out[kBlock]);

// The ranked distances of the runs' entries, one after another in run
// order, into out.
using DistancesFn = void (*)(const KeyBlock* blocks, const Target& target, const Runs& runs, float* out);
// The position of the least of d[0..n) (the first of equal ones), -1 when
// none is below +inf.
using LeastFn = int (*)(const float* d, int n);

struct Kernels {
  SearchFn search = nullptr;
  BlockFn block = nullptr;
  DistancesFn distances = nullptr;
  LeastFn least = nullptr;
};

Kernels portableKernels();
// Null members where the build has no AVX2 copy; only call on a CPU with
// AVX2 and FMA.
Kernels avx2Kernels();

}  // namespace ikbench::seed_search
