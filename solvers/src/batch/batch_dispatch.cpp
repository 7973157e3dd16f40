// Which compiled kernel this CPU runs: AVX2 + FMA where the CPU has them
// (and IKBENCH_BATCH_ISA does not say portable), the portable one otherwise.
#include "batch_internal.h"

#include <cstdlib>
#include <cstring>

namespace ikbench::batch_detail {

bool cpuHasAvx2() {
#if defined(__x86_64__) || defined(__i386__)
  return batch::avx2Step() != nullptr && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

KernelIsa selectKernel(BatchIsa isa) {
  if (isa == BatchIsa::kAuto) {
    const char* env = std::getenv("IKBENCH_BATCH_ISA");
    if (env != nullptr && std::strcmp(env, "portable") == 0) isa = BatchIsa::kPortable;
  }
  if (isa != BatchIsa::kPortable && cpuHasAvx2()) return {batch::avx2Step(), batch::avx2OneStep(), batch::avx2Errors(), "avx2"};
  return {batch::portableStep(), batch::portableOneStep(), batch::portableErrors(), "portable"};
}

}  // namespace ikbench::batch_detail

namespace ikbench {

std::string batchIsaName(BatchIsa isa) { return batch_detail::selectKernel(isa).name; }

}  // namespace ikbench
