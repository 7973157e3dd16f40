#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, the `fuzz` preset: clang, ASan, UBSan)
# and runs each from its committed seed corpus (fuzz/corpus/<target>, plus the
# shipped models and suites), `nproc` targets at a time (IKBENCH_FUZZ_JOBS). Fails if any target
# finds a crash, a sanitizer report, a leak, a timeout or a broken fuzz check;
# the input that did it is kept in the log directory.
#
#   scripts/fuzz.sh                      # every target for 60 s (CI, through scripts/test.sh: 30 s)
#   scripts/fuzz.sh 600 urdf bvh         # chosen targets, 10 minutes each
#   scripts/fuzz.sh --runs 10000000      # a fixed number of executions per target
#
# Targets: urdf bvh suite scene solver_spec solver results. Logs and any crashing inputs go
# to results/fuzz/<timestamp>/ (IKBENCH_FUZZ_OUT overrides); new inputs found
# are written to a scratch corpus there, never into fuzz/corpus.
set -euo pipefail
cd "$(dirname "$0")/.."

limit=(-max_total_time=60)
label="60 s"
if [ "${1:-}" = "--runs" ]; then
  limit=(-runs="${2:?--runs needs a count}")
  label="${2} executions"
  shift 2
elif [ $# -gt 0 ] && [[ "$1" =~ ^[0-9]+$ ]]; then
  limit=(-max_total_time="$1")
  label="$1 s"
  shift
fi
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(urdf bvh suite scene solver_spec solver results)

./scripts/setup.sh test
cmake --preset fuzz -G "Unix Makefiles" >/dev/null
cmake --build --preset fuzz -j "${IKBENCH_JOBS:-$(nproc)}"

out="${IKBENCH_FUZZ_OUT:-results/fuzz/$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$out"
declare -A extra=([urdf]=scenarios/data/robots [bvh]=scenarios/data/skeletons [suite]=scenarios/data/suites [scene]=scenarios/data/scenes)

run_one() {
  local t="$1"
  local bin="build/fuzz/fuzz/fuzz_$t"
  [ -x "$bin" ] || { echo "fuzz: unknown target '$t' (no $bin)" >&2; return 2; }
  mkdir -p "$out/$t/corpus" "$out/$t/crashes"
  local seeds=("fuzz/corpus/$t")
  [ -n "${extra[$t]:-}" ] && seeds+=("${extra[$t]}")
  # Inputs larger than 64 KiB are not explored; each input gets 60 s and 3 GiB.
  "$bin" "${limit[@]}" -timeout=60 -rss_limit_mb=3072 -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="$out/$t/crashes/" "$out/$t/corpus" "${seeds[@]}" >"$out/$t.log" 2>&1
}

echo "== fuzz: ${targets[*]} for $label each; logs in $out"
declare -A pid_of
status=0
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "${IKBENCH_FUZZ_JOBS:-$(nproc)}" ]; do wait -n || true; done
  run_one "$t" &
  pid_of[$t]=$!
done
for t in "${targets[@]}"; do
  if wait "${pid_of[$t]}"; then
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$out/$t.log" | grep -o '[0-9]*$' || echo "?")
    echo "fuzz_$t: ok, $execs executions, 0 crashes"
  else
    status=1
    echo "fuzz_$t: FAILED (log: $out/$t.log; inputs: $out/$t/crashes/)" >&2
    grep -m 5 -E 'ERROR|fuzz check failed|runtime error|deadly signal|Timeout|out-of-memory' "$out/$t.log" >&2 || true
  fi
done
exit $status
