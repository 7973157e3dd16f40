#!/usr/bin/env bash
# The README's test command: installs what is missing, builds (release by
# default; IKBENCH_TEST_PRESET=debug for AddressSanitizer + UBSan), runs every
# test through ctest, then (release only) the regression gate: the `quick`
# suite compared with the committed baseline in results/baseline/quick.
# IKBENCH_GATE=0 skips the gate.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
preset="${IKBENCH_TEST_PRESET:-release}"
jobs="${IKBENCH_JOBS:-$(nproc)}"
cmake --preset "$preset" -G "Unix Makefiles" >/dev/null
cmake --build --preset "$preset" -j "$jobs"
ctest --preset "$preset" -j "$jobs"
if [ "$preset" = release ] && [ "${IKBENCH_GATE:-1}" != 0 ]; then
  echo
  echo "== regression gate: quick suite vs results/baseline/quick"
  IKBENCH_BUILD_DIR=build/release ./scripts/ci_gate.sh
fi
