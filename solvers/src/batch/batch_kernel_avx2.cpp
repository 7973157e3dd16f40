// The batch kernel with AVX2 and FMA: a 4-lane vector is one ymm register and
// vfma is one fused multiply-add. Every function of this file is compiled
// for AVX2 + FMA in the region avx2_fma_begin.h opens, while the file itself
// (and the rest of the program) keeps the build's SSE2 baseline, so nothing here is
// reachable except through avx2Step(), which the driver calls only after
// __builtin_cpu_supports("avx2") and ("fma") said yes. The kernel's code
// lives in its own namespace: no inline function is shared with other files.
#include <immintrin.h>

#include <cstdint>

#include "batch_layout.h"

#include "avx2_fma_begin.h"
#ifdef IKBENCH_HAVE_AVX2_FMA

namespace ikbench::batch {
namespace avx2 {

typedef double V __attribute__((vector_size(32)));
typedef decltype(V{} < V{}) Mk;
typedef unsigned long long Mu __attribute__((vector_size(32)));

inline V vfma(V a, V b, V c) { return (V)_mm256_fmadd_pd((__m256d)a, (__m256d)b, (__m256d)c); }
inline V select(Mk m, V a, V b) { return (V)_mm256_blendv_pd((__m256d)b, (__m256d)a, (__m256d)m); }
inline V selectSign(Mk m, V a, V b) { return select(m, a, b); }  // blendv reads the sign bit only
inline V vsqrt(V a) { return (V)_mm256_sqrt_pd((__m256d)a); }
inline int movemask(Mk m) { return _mm256_movemask_pd((__m256d)m); }

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

}  // namespace avx2
}  // namespace ikbench::batch

#endif
#include "avx2_fma_end.h"

namespace ikbench::batch {
#ifdef IKBENCH_HAVE_AVX2_FMA
StepFn avx2Step() { return &avx2::step; }
StepFn avx2OneStep() { return &avx2::oneStep; }
ErrorsFn avx2Errors() { return &avx2::errors; }
#else
StepFn avx2Step() { return nullptr; }
StepFn avx2OneStep() { return nullptr; }
ErrorsFn avx2Errors() { return nullptr; }
#endif
}  // namespace ikbench::batch
