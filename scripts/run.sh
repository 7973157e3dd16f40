#!/usr/bin/env bash
# The README's main command: installs what is missing, builds the release
# preset and runs the main job.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
jobs="${IKBENCH_JOBS:-$(nproc)}"
cmake --preset release -G "Unix Makefiles" >/dev/null
cmake --build --preset release -j "$jobs"
./build/release/benchmarks/ikbench_demo
