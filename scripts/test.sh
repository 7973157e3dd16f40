#!/usr/bin/env bash
# The README's test command: installs what is missing, builds (release by
# default; IKBENCH_TEST_PRESET=debug for AddressSanitizer + UBSan) and runs
# every test through ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
preset="${IKBENCH_TEST_PRESET:-release}"
jobs="${IKBENCH_JOBS:-$(nproc)}"
cmake --preset "$preset" -G "Unix Makefiles" >/dev/null
cmake --build --preset "$preset" -j "$jobs"
ctest --preset "$preset" -j "$jobs"
