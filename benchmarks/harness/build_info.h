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
// {"cpu", "hardware_threads"} of this machine.
nlohmann::json machineJson();

}  // namespace ikbench::harness
