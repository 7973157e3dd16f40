// The seed library's search for the build's baseline instruction set (SSE2
// on x86-64): the fallback without AVX2 or FMA, or when asked for
// (IKBENCH_BATCH_ISA=portable). Eight floats are two SSE2 registers here;
// without a fused multiply-add, madd rounds twice.
#include "seed_search.h"

#if defined(__SSE__)
#include <xmmintrin.h>
#endif

// 32-byte vectors are passed in memory without AVX; every function here is
// internal to this file, so the ABI note does not matter.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace ikbench::seed_search {
namespace portable {
namespace {

typedef float V8 __attribute__((vector_size(32)));
inline V8 madd(V8 a, V8 b, V8 c) { return a * b + c; }
inline V8 vmin(V8 a, V8 b) { return b < a ? b : a; }
inline unsigned lessMask(V8 a, V8 b) {
#if defined(__SSE__)
  __m128 alo, ahi, blo, bhi;
  __builtin_memcpy(&alo, &a, sizeof alo);
  __builtin_memcpy(&ahi, reinterpret_cast<const char*>(&a) + sizeof alo, sizeof ahi);
  __builtin_memcpy(&blo, &b, sizeof blo);
  __builtin_memcpy(&bhi, reinterpret_cast<const char*>(&b) + sizeof blo, sizeof bhi);
  return static_cast<unsigned>(_mm_movemask_ps(_mm_cmplt_ps(alo, blo)) | _mm_movemask_ps(_mm_cmplt_ps(ahi, bhi)) << 4);
#else
  unsigned bits = 0;
  for (int j = 0; j < kBlock; ++j) bits |= static_cast<unsigned>(a[j] < b[j]) << j;
  return bits;
#endif
}

using Top = ScalarTop;

#include "seed_search_body.h"

}  // namespace
}  // namespace portable

Kernels portableKernels() { return {&portable::search, &portable::block, &portable::distances, &portable::least}; }

}  // namespace ikbench::seed_search
