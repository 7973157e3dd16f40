#!/usr/bin/env bash
# The README's test command (and CI's, through .ci/run). Installs what is
# missing, then runs four stages, each failing the script on its first error:
#   1. release build (-O3) and every test through ctest;
#   2. the regression gate: the `quick` suite against results/baseline/quick;
#   3. the unit and harness tests again under AddressSanitizer + UBSan (the
#      `debug` preset; the Python, browser, Slurm and gate tests stay in stage 1);
#   4. every fuzz target (fuzz/) for IKBENCH_FUZZ_SECONDS seconds each (30: the
#      whole command stays within CI's 45 minutes on two cores; scripts/fuzz.sh
#      alone runs them longer).
# IKBENCH_GATE=0, IKBENCH_SANITIZERS=0 and IKBENCH_FUZZ_SECONDS=0 skip a stage;
# IKBENCH_TEST_PRESET=debug runs stage 1 under the sanitizers only.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh test
preset="${IKBENCH_TEST_PRESET:-release}"
jobs="${IKBENCH_JOBS:-$(nproc)}"
start=$SECONDS
stage() { echo; echo "== $1 ($(( SECONDS - start )) s so far)"; }

stage "build and test: $preset preset"
cmake --preset "$preset" -G "Unix Makefiles" -DIKBENCH_REQUIRE_TESTS=ON >/dev/null
cmake --build --preset "$preset" -j "$jobs"
ctest --preset "$preset" -j "$jobs"
[ "$preset" = release ] || exit 0

if [ "${IKBENCH_GATE:-1}" != 0 ]; then
  stage "regression gate: quick suite vs results/baseline/quick"
  IKBENCH_BUILD_DIR=build/release ./scripts/ci_gate.sh
fi

if [ "${IKBENCH_SANITIZERS:-1}" != 0 ]; then
  stage "AddressSanitizer + UndefinedBehaviorSanitizer: debug preset"
  cmake --preset debug -G "Unix Makefiles" -DIKBENCH_REQUIRE_TESTS=ON >/dev/null
  cmake --build --preset debug -j "$jobs"
  # Stage 1 ran the tests labelled needs_release: the Python packages cannot
  # load an ASan build, the browser and Slurm tests exercise other programs,
  # the gate compares release runs (tests/CMakeLists.txt lists the tiers).
  ctest --preset debug -j "$jobs" -LE needs_release
fi

fuzz_seconds="${IKBENCH_FUZZ_SECONDS:-30}"
if [ "$fuzz_seconds" != 0 ]; then
  stage "fuzzing: every target for $fuzz_seconds s"
  IKBENCH_FUZZ_OUT="${IKBENCH_FUZZ_OUT:-$(mktemp -d /tmp/ikbench-fuzz.XXXXXX)}" ./scripts/fuzz.sh "$fuzz_seconds"
fi
echo
echo "== all stages passed in $(( SECONDS - start )) s"
