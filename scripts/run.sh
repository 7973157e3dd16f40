#!/usr/bin/env bash
# The README's main command: installs what is missing, builds the release
# preset's main targets, runs the `default` suite with every backend it lists (those in this
# build), measures the 7-DOF DLS throughput, runs the Google Benchmark
# binaries (short), then writes the PNG/SVG plots (for papers) and the
# interactive report.html (docs/report.md), and prints where.
#
# Environment:
#   IKBENCH_JOBS=N        build parallelism (default: nproc)
#   IKBENCH_SUITE=NAME    suite to run (default: default)
#   IKBENCH_OUT=DIR       results directory (default results/<timestamp>-<suite>)
#   IKBENCH_GBENCH=0      skip the Google Benchmark binaries
#   IKBENCH_THROUGHPUT=0  skip `ikbench throughput`
#   IKBENCH_HISTORY=DB    history store the run is added to (default results/history.sqlite; 0: none)
#   IKBENCH_PLAYGROUND=0  skip the playground page
#   --quick (first argument): the CLI alone, the quick suite and its report, for a first look
#   extra arguments are passed to `ikbench run` (e.g. --solvers dls,sdls)
# It installs (scripts/setup.sh main) and builds only what the main job uses: the CLI, the
# Google Benchmark binaries it runs and the playground's module; not the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
if [ "${1:-}" = --quick ]; then
  quick=1
  shift
fi
./scripts/setup.sh main
jobs="${IKBENCH_JOBS:-$(nproc)}"
cmake --preset release -G "Unix Makefiles" >/dev/null
# Only what the main job runs (the target main_job: the CLI, the Google Benchmark
# binaries below and the playground's WebAssembly module where emscripten is
# installed; --quick: the CLI alone); the test tree is the test command's
# (scripts/test.sh).
target=main_job
if [ "$quick" = 1 ]; then
  # A first look in seconds: the quick suite, its report, nothing else.
  target=ikbench
  : "${IKBENCH_SUITE:=quick}" "${IKBENCH_THROUGHPUT:=0}" "${IKBENCH_GBENCH:=0}" "${IKBENCH_HISTORY:=0}"
  : "${IKBENCH_PLAYGROUND:=0}"
fi
build_start=$(date +%s)
cmake --build build/release -j "$jobs" --target "$target"
echo "built $target in $(( $(date +%s) - build_start )) s"

bin=./build/release/benchmarks
suite="${IKBENCH_SUITE:-default}"
out="${IKBENCH_OUT:-results/$(date +%Y%m%d-%H%M%S)-${suite}}"
start=$(date +%s)

"$bin/ikbench" run --suite "$suite" --out "$out" "$@"

if [ "${IKBENCH_THROUGHPUT:-1}" != 0 ]; then
  echo
  echo "== throughput: converged 7-DOF DLS pose solves per second at 1 and 2 threads"
  "$bin/ikbench" throughput --out "$out"
fi

if [ "${IKBENCH_GBENCH:-1}" != 0 ]; then
  # Three repetitions each, so that Google Benchmark's tools/compare.py (its
  # Mann-Whitney U test) can compare two runs' JSON files.
  echo
  echo "== Google Benchmark: bench_kinematics, bench_solvers (short runs, 3 repetitions; JSON into $out)"
  echo "note: Debian's libbenchmark is built as DEBUG; its warning \"Library was built as DEBUG\" concerns the" \
       "library, not ikbench's code, which is built -O3 (the release preset)"
  "$bin/bench_kinematics" --benchmark_min_time=0.05 --benchmark_repetitions=3 \
    --benchmark_out="$out/bench_kinematics.json" --benchmark_out_format=json >/dev/null
  IKBENCH_BENCH_MAX_DOF=100 "$bin/bench_solvers" --benchmark_min_time=0.02 --benchmark_repetitions=3 \
    --benchmark_filter='^(Solve|Iteration|PerIteration)/' \
    --benchmark_out="$out/bench_solvers.json" --benchmark_out_format=json >/dev/null 2>&1 || \
    echo "bench_solvers failed (see $out/bench_solvers.json)" >&2
fi

if [ "${IKBENCH_HISTORY:-results/history.sqlite}" != 0 ]; then
  echo
  echo "== history: the run, its Google Benchmark JSON and throughput.json (docs/history.md)"
  "$bin/ikbench" history add "$out" --db "${IKBENCH_HISTORY:-results/history.sqlite}"
fi

echo
echo "== plots (PNG/SVG for papers)"
/usr/bin/python3 scripts/plot.py "$out" --no-report
if [ "${IKBENCH_PLAYGROUND:-1}" != 0 ] && [ -f build/release/wasm/playground/ikbench_playground.js ]; then
  echo
  echo "== playground (docs/playground.md), beside the report, which links it"
  "$bin/ikbench" playground --out "$out/playground.html"
fi
echo
echo "== report"
"$bin/ikbench" report "$out"
report="$(cd "$out" && pwd)/report.html"
echo
echo "main job done in $(( $(date +%s) - start )) s"
echo "results: $(cd "$out" && pwd)"
echo "report:  $report"
echo "         (self-contained, opens offline: chromium $report, or file://$report in any browser)"
if [ -f "$out/playground.html" ]; then
  echo "playground: $(cd "$out" && pwd)/playground.html (drag a target, the solvers follow it live)"
fi
