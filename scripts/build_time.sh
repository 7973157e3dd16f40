#!/usr/bin/env bash
# The build as a measured figure: a clean build, without ccache, of what the main command
# (scripts/run.sh) builds, from a fresh worktree of a commit: the configuration's and the build's
# wall and CPU time, and the size of every binary it makes. Written as OUT/build.json in Google Benchmark's JSON format, so that
# `ikbench history add` of a run directory that holds it records the figures per commit
# (family gbench:build, docs/history.md) and the trend and the change points show a build that
# got slower or larger.
#
#   scripts/build_time.sh OUT [REV]     REV: the commit to build (default HEAD)
#
# Environment: IKBENCH_JOBS (default: nproc). The machine's load average is recorded before and
# after; a loaded machine builds slower, so compare build times measured at a similar load.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: scripts/build_time.sh OUT [REV]" >&2; exit 2; }
repo="$(cd "$(dirname "$0")/.." && pwd)"
out=$1
rev=${2:-HEAD}
jobs="${IKBENCH_JOBS:-$(nproc)}"
sha=$(git -C "$repo" rev-parse --verify "$rev^{commit}") || { echo "build_time: '$rev' is not a commit" >&2; exit 2; }
mkdir -p "$out"
[ ! -e "$out/build.json" ] || [ -f "$out/build.json" ] || { echo "build_time: $out/build.json is not a regular file" >&2; exit 2; }
work=$(mktemp -d /tmp/ikbench-build-time.XXXXXX)
trap 'git -C "$repo" worktree remove --force "$work/src" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git -C "$repo" worktree add --detach "$work/src" "$sha" >/dev/null 2>&1

load() { cut -d' ' -f1 /proc/loadavg; }
# timed FILE CMD...: runs CMD (output discarded), appends "wall user+system" seconds to FILE
# (bash's `time`, which counts the CPU time of every process the command waited for).
timed() {
  local file=$1 TIMEFORMAT='%R %U %S'
  shift
  { time "$@" >/dev/null; } 2>"$file.err" || { tail -n 20 "$file.err" >&2; return 1; }
  tail -n 1 "$file.err" | awk '{ print $1, $2 + $3 }' >>"$file"
}

load_start=$(load)
export CCACHE_DISABLE=1
cd "$work/src"
times_file="$work/times"
timed "$times_file" cmake --preset release -G "Unix Makefiles" -DIKBENCH_CCACHE=OFF -DIKBENCH_BUILD_TESTS=OFF
# The main command's targets (main_job: the CLI, the Google Benchmark binaries it runs and the
# playground's WebAssembly module where emscripten is installed), as scripts/run.sh builds them.
wasm=0
grep -q '^playground_wasm:' build/release/Makefile 2>/dev/null && wasm=1
if grep -q '^main_job:' build/release/Makefile; then
  timed "$times_file" cmake --build build/release -j "$jobs" --target main_job
else  # a commit from before the main_job target: the same targets by name
  timed "$times_file" cmake --build build/release -j "$jobs" --target ikbench bench_kinematics bench_solvers \
    $([ "$wasm" = 1 ] && echo playground_wasm)
fi
load_end=$(load)

BIN="$work/src/build/release" OUT="$out/build.json" SHA="$sha" JOBS="$jobs" WASM="$wasm" \
TIMES="$times_file" LOAD="$load_start $load_end" /usr/bin/python3 - <<'EOF'
import json, os, socket, time
steps = [[float(x) for x in line.split()] for line in open(os.environ["TIMES"])]
load_start, load_end = (float(x) for x in os.environ["LOAD"].split())
b = os.environ["BIN"]
sizes = {}
for rel in ("benchmarks/ikbench", "benchmarks/bench_kinematics", "benchmarks/bench_solvers",
            "wasm/playground/ikbench_playground.js"):
    p = os.path.join(b, rel)
    if os.path.isfile(p):
        sizes[os.path.basename(rel).replace(".", "_") + "_bytes"] = os.path.getsize(p)
def entry(name, step, **counters):
    wall, cpu = steps[step]
    return dict({"name": name, "run_name": name, "run_type": "iteration", "repetitions": 1, "repetition_index": 0,
                 "threads": 1, "iterations": 1, "real_time": wall, "cpu_time": cpu, "time_unit": "s"}, **counters)
# One series per kind of build: with the playground's module or without it (no emscripten).
build = "build/main_job" + ("" if os.environ["WASM"] == "1" else "/no_wasm")
benchmarks = [entry("build/configure", 0), entry(build, 1, **sizes)]
doc = {"context": {"date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "host_name": socket.gethostname(),
                   "executable": "scripts/build_time.sh", "num_cpus": os.cpu_count(), "jobs": int(os.environ["JOBS"]),
                   "git_revision": os.environ["SHA"], "ccache": False,
                   "load_avg": [load_start, load_end], "library_build_type": "release"},
       "benchmarks": benchmarks}
tmp = os.environ["OUT"] + ".tmp"
with open(tmp, "w") as f:
    json.dump(doc, f, indent=1)
    f.write("\n")
os.replace(tmp, os.environ["OUT"])
for e in benchmarks:
    print(f"{e['name']:<16} {e['real_time']:7.1f} s wall  {e['cpu_time']:7.1f} s CPU")
for k, v in sizes.items():
    print(f"{k:<32} {v / 1e6:7.2f} MB")
print(f"load average {load_start} -> {load_end}; written {os.environ['OUT']}")
EOF
