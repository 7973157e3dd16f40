// Opens a region of a source file whose functions are compiled for AVX2 +
// FMA while the rest of the program keeps the build's baseline: on x86 it
// defines IKBENCH_HAVE_AVX2_FMA and pushes the target (GCC's pragma, clang's
// attribute); elsewhere it does nothing. Close the region with
// avx2_fma_end.h. Code inside is reachable only through functions the caller
// uses after __builtin_cpu_supports("avx2") and ("fma") said yes (the batch
// kernel, the seed library's search). Included once per region, so no
// include guard.
#if defined(__x86_64__) || defined(__i386__)
#define IKBENCH_HAVE_AVX2_FMA 1
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#endif
#endif
