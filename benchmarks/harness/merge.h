// `ikbench merge SHARD_DIR... --out DIR`: the shards of one run (ikbench run
// --shard K/N) merged into one results directory whose files equal an
// unsharded run's apart from the time columns and run.json's timing fields.
// A missing, duplicated or incomplete shard, or shards of different suites,
// seeds, specs, builds or trace settings, is an error (ResultsError or
// HarnessError), never merged silently.
#pragma once

#include <string>
#include <vector>

#include "harness/run_config.h"

namespace ikbench::harness {

struct MergeReport {
  int shards = 0;
  long solves = 0;
  std::string out_dir;
};
MergeReport mergeShards(const std::vector<std::string>& shard_dirs, const std::string& out_dir, OutputMode mode);

}  // namespace ikbench::harness
