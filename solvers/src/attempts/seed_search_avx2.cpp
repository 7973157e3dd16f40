// The seed library's search on AVX2 + FMA: eight entries per ymm register,
// fused multiply-adds. Compiled for AVX2 + FMA in the region avx2_fma_begin.h opens,
// reachable only through avx2Kernels(), which SeedLibrary calls after
// __builtin_cpu_supports("avx2") and ("fma") said yes.
#include <immintrin.h>

#include "seed_search.h"

#include "avx2_fma_begin.h"
#ifdef IKBENCH_HAVE_AVX2_FMA

namespace ikbench::seed_search {
namespace avx2 {
namespace {

typedef float V8 __attribute__((vector_size(32)));
inline V8 madd(V8 a, V8 b, V8 c) { return (V8)_mm256_fmadd_ps((__m256)a, (__m256)b, (__m256)c); }
inline V8 vmin(V8 a, V8 b) { return (V8)_mm256_min_ps((__m256)a, (__m256)b); }
inline unsigned lessMask(V8 a, V8 b) {
  return static_cast<unsigned>(_mm256_movemask_ps(_mm256_cmp_ps((__m256)a, (__m256)b, _CMP_LT_OQ)));
}

// The k <= 8 best in one register of distances and one of entries, sorted:
// an insertion is a compare, two lane shifts and three blends, without a
// branch or a store (the scalar insertion's shifting loop, its mispredicted
// exits and store-to-load forwarding were most of a search for eight).
// k = 1 (a compare and a store) and larger k: ScalarTop.
struct Top {
  ScalarTop scalar;
  bool in_register;
  __m256 d;
  __m256i entry;
  explicit Top(Best& best) : scalar(best), in_register(best.k > 1 && best.k <= kBlock) {
    if (!in_register) return;
    alignas(32) float dd[kBlock];
    alignas(32) int ee[kBlock];
    for (int j = 0; j < kBlock; ++j) {
      dd[j] = j < best.found ? best.d[j] : __builtin_inff();
      ee[j] = j < best.found ? best.out[j] : -1;
    }
    d = _mm256_load_ps(dd);
    entry = _mm256_load_si256(reinterpret_cast<const __m256i*>(ee));
  }
  void insert(float dj, int e) {
    if (!in_register) return scalar.insert(dj, e);
    const __m256 D = _mm256_set1_ps(dj);
    const __m256 after = _mm256_cmp_ps(d, D, _CMP_GT_OQ);  // the lanes the new entry goes before
    const __m256i up = _mm256_setr_epi32(0, 0, 1, 2, 3, 4, 5, 6);
    // Lanes whose left neighbour moves up too take it; the first lane that
    // moves takes the new entry.
    const __m256 shifted = _mm256_blend_ps(_mm256_permutevar8x32_ps(after, up), _mm256_setzero_ps(), 1);
    const __m256 nd = _mm256_blendv_ps(D, _mm256_permutevar8x32_ps(d, up), shifted);
    const __m256 ne = _mm256_blendv_ps(_mm256_castsi256_ps(_mm256_set1_epi32(e)),
                                       _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(entry, up)), shifted);
    d = _mm256_blendv_ps(d, nd, after);
    entry = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(entry), ne, after));
  }
  float worst() const {
    if (!in_register) return scalar.worst();
    return _mm256_cvtss_f32(_mm256_permutevar8x32_ps(d, _mm256_set1_epi32(scalar.b.k - 1)));
  }
  void store() {
    if (!in_register) return;
    alignas(32) float dd[kBlock];
    alignas(32) int ee[kBlock];
    _mm256_store_ps(dd, d);
    _mm256_store_si256(reinterpret_cast<__m256i*>(ee), entry);
    for (int j = 0; j < scalar.b.found; ++j) {
      scalar.b.d[j] = dd[j];
      scalar.b.out[j] = ee[j];
    }
  }
};

#include "seed_search_body.h"

}  // namespace

Kernels kernels() { return {&search, &block, &distances, &least}; }

}  // namespace avx2
}  // namespace ikbench::seed_search

#endif
#include "avx2_fma_end.h"

namespace ikbench::seed_search {
#ifdef IKBENCH_HAVE_AVX2_FMA
Kernels avx2Kernels() { return avx2::kernels(); }
#else
Kernels avx2Kernels() { return {}; }
#endif
}  // namespace ikbench::seed_search
