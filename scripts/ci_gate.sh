#!/usr/bin/env bash
# The CI regression gate: run the `quick` suite with an already built release
# tree and compare it with the committed baseline (README: "Regression gate").
# The suite runs IKBENCH_GATE_REPEATS times (a few seconds each); the gate
# keeps each cell's fastest repeat, which takes most of the noise of a shared
# machine out of the time comparison (deterministic figures are identical in
# every repeat).
#
#   scripts/ci_gate.sh [regress.py compare options...]   # gate: exit 0 pass, 1 regression, 2 bad input
#   scripts/ci_gate.sh update                            # same run, then write it as the new baseline
#
# Environment (all optional):
#   IKBENCH_BUILD_DIR      build tree holding benchmarks/ikbench   (build/release)
#   IKBENCH_GATE_SUITE     suite to run                            (quick)
#   IKBENCH_GATE_THREADS   harness threads                         (2)
#   IKBENCH_GATE_REPEATS   runs of the suite, combined by the gate (3)
#   IKBENCH_GATE_BASELINE  baseline directory                      (results/baseline/<suite>)
#   IKBENCH_GATE_OUT       results directory of this run           (a new mktemp dir, kept)
#   IKBENCH_PYTHON         Python 3                                (/usr/bin/python3)
set -euo pipefail
cd "$(dirname "$0")/.."

build="${IKBENCH_BUILD_DIR:-build/release}"
suite="${IKBENCH_GATE_SUITE:-quick}"
threads="${IKBENCH_GATE_THREADS:-2}"
repeats="${IKBENCH_GATE_REPEATS:-3}"
baseline="${IKBENCH_GATE_BASELINE:-results/baseline/$suite}"
python="${IKBENCH_PYTHON:-/usr/bin/python3}"
ikbench="$build/benchmarks/ikbench"

mode=compare
if [[ "${1:-}" == "update" ]]; then
  mode=update
  shift
fi

if [[ ! -x "$ikbench" ]]; then
  echo "ci_gate: $ikbench not found; build the release tree first:" >&2
  echo "  cmake --preset release && cmake --build --preset release" >&2
  exit 2
fi
if [[ "$mode" == compare && ! -f "$baseline/baseline.json" ]]; then
  echo "ci_gate: no baseline at $baseline/baseline.json, so there is nothing to compare with." >&2
  echo "  Create it from this build (then review and commit it):" >&2
  echo "    scripts/ci_gate.sh update" >&2
  exit 2
fi

if ! [[ "$repeats" =~ ^[1-9][0-9]*$ ]]; then
  echo "ci_gate: IKBENCH_GATE_REPEATS must be a positive integer, got '$repeats'" >&2
  exit 2
fi
out="${IKBENCH_GATE_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/ikbench-gate-$suite.XXXXXX")}"
mkdir -p "$out"
runs=()
for i in $(seq 1 "$repeats"); do
  echo "ci_gate: suite '$suite', $threads threads, repeat $i of $repeats -> $out/run$i"
  "$ikbench" run --suite "$suite" --threads "$threads" --out "$out/run$i" --no-trace --progress none \
    > "$out/run$i.log" 2>&1 || { rc=$?; cat "$out/run$i.log" >&2; echo "ci_gate: ikbench failed ($rc)" >&2; exit 2; }
  tail -n 2 "$out/run$i.log"
  runs+=("$out/run$i")
done

if [[ "$mode" == update ]]; then
  "$python" scripts/regress.py update "${runs[@]}" --baseline "$baseline"
  echo "ci_gate: review 'git diff $baseline' and commit it with the change that explains it"
  exit 0
fi

# Every reported success re-checked by forward kinematics from the run's own
# files: the harness's verdict (ikbench verify), and the analysis library's
# independent numpy FK held to it as a cross-check.
echo "ci_gate: verify $out/run1"
"$ikbench" verify "$out/run1" | tail -n 1 || { echo "ci_gate: ikbench verify found false results" >&2; exit 1; }
PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}" "$python" -m ikbench verify "$out/run1" --ikbench "$ikbench" |
  tail -n 2 || { echo "ci_gate: the analysis library's verify found false results or a cross-check finding" >&2; exit 1; }

set +e
"$python" scripts/regress.py compare "$baseline" "${runs[@]}" --markdown "$out/regress.md" "$@"
rc=$?
set -e
echo "ci_gate: run kept in $out (report: $out/regress.md); gate exit status $rc"
exit $rc
