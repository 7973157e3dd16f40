// Facts about the build and the machine, recorded in every results file.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace ikbench::harness {

// `git rev-parse HEAD` of the source tree, with "-dirty" when tracked files
// have local changes; "unknown" outside a checkout.
std::string gitRevision();
// /proc/cpuinfo's model name.
std::string cpuModel();
// Now, ISO 8601 in UTC ("2026-11-23T15:43:46Z").
std::string isoTimeUtc();
// {"compiler", "build_type", "flags"} of this build.
nlohmann::json buildJson();
// {"cpu", "hardware_threads"} of this machine; "vendor", "family", "model",
// "stepping" and "isa" (which of avx2, fma, avx512f it has), which tell apart
// two machines whose model names read alike (virtual machines often report
// a generic one, "AMD EPYC"), where /proc/cpuinfo has them; "l2_cache_kib"
// and "l3_cache_kib" (CPU 0's, from sysfs) where known; and "batch_kernel":
// the batch kernel BatchIsa::kAuto runs here ("avx2" or "portable").
nlohmann::json machineJson();

}  // namespace ikbench::harness
