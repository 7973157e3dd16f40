// The main() of every Google Benchmark binary here: the benchmarks are
// registered at run time by ikbench::registerAll() (names carry their
// arguments, e.g. Solve/dls/dof:7/goal:pose, and unsupported pairs are not
// registered), then the library's usual main.
#pragma once

#include <benchmark/benchmark.h>

#define IKBENCH_BENCHMARK_MAIN()                                     \
  int main(int argc, char** argv) {                                  \
    ikbench::registerAll();                                          \
    benchmark::Initialize(&argc, argv);                              \
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1; \
    benchmark::RunSpecifiedBenchmarks();                             \
    benchmark::Shutdown();                                           \
    return 0;                                                        \
  }
