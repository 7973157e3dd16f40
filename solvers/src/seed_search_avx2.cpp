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
