// Closes the region avx2_fma_begin.h opened (IKBENCH_HAVE_AVX2_FMA stays
// defined, for the code after it that hands out the region's functions).
#if defined(IKBENCH_HAVE_AVX2_FMA)
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif
