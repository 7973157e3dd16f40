// The batch kernel for the build's baseline instruction set (SSE2 on
// x86-64, plain lanes elsewhere: WebAssembly, see playground/): the fallback
// when the CPU lacks AVX2 or FMA, or when it is asked for (BatchIsa::kPortable,
// IKBENCH_BATCH_ISA=portable). A 4-lane vector is two SSE2 registers on
// x86-64; there is no fused multiply-add, so vfma rounds twice and the answers
// differ from the AVX2 kernel's at rounding level (and equal the portable
// kernel's on any other target: every operation is a correctly rounded IEEE one).
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <cmath>

#include <cstdint>

#include "batch_layout.h"

// 32-byte vectors are passed in memory without AVX; every function here is
// internal to this file, so the ABI note does not matter.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace ikbench::batch {
namespace portable {

typedef double V __attribute__((vector_size(32)));
typedef decltype(V{} < V{}) Mk;
typedef unsigned long long Mu __attribute__((vector_size(32)));

inline V vfma(V a, V b, V c) { return a * b + c; }
inline V select(Mk m, V a, V b) { return (V)(((Mk)a & m) | ((Mk)b & ~m)); }
inline V selectSign(Mk m, V a, V b) { return select(m >> 63, a, b); }  // arithmetic shift: sign to all bits
inline V vsqrt(V a) {
#if defined(__SSE2__)
  __m128d lo, hi;
  __builtin_memcpy(&lo, &a, sizeof lo);
  __builtin_memcpy(&hi, reinterpret_cast<const char*>(&a) + sizeof lo, sizeof hi);
  lo = _mm_sqrt_pd(lo);
  hi = _mm_sqrt_pd(hi);
  V out;
  __builtin_memcpy(&out, &lo, sizeof lo);
  __builtin_memcpy(reinterpret_cast<char*>(&out) + sizeof lo, &hi, sizeof hi);
  return out;
#else
  return V{std::sqrt(a[0]), std::sqrt(a[1]), std::sqrt(a[2]), std::sqrt(a[3])};
#endif
}
inline int movemask(Mk m) {
  return static_cast<int>((m[0] < 0) | ((m[1] < 0) << 1) | ((m[2] < 0) << 2) | ((m[3] < 0) << 3));
}

namespace {
#include "batch_kernel.h"
}  // namespace

void step(const KernelParams& params, LaneGroup* groups, int num_groups, std::uint8_t* ended) {
  stepAll<false>(params, groups, num_groups, ended);
}

void oneStep(const KernelParams& params, LaneGroup* groups, int num_groups, std::uint8_t* ended) {
  stepAll<true>(params, groups, num_groups, ended);
}

void errors(const KernelParams& params, LaneGroup* groups, int num_groups) { errorsAll(params, groups, num_groups); }

}  // namespace portable

StepFn portableStep() { return &portable::step; }
StepFn portableOneStep() { return &portable::oneStep; }
ErrorsFn portableErrors() { return &portable::errors; }

}  // namespace ikbench::batch
