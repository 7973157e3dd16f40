#!/usr/bin/env bash
# Measures one `ikbench run` (a sweep) on this machine two ways: as one
# process, and as Slurm job arrays through run_array.sh on a single-node
# cluster started here (local_cluster.sh), then checks that every merged
# result equals the one-process run apart from the time columns. The figures
# of docs/cluster.md come from it.
set -euo pipefail

prog=$(basename "$0")
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)

usage() {
  cat <<EOF
Usage: $prog --out DIR [--shards LIST] [--threads T] [--ikbench PATH] [--timeout S] -- <ikbench run arguments...>

  --out DIR        working directory (created; must be empty): results, the
                   cluster, figures.txt
  --shards LIST    array sizes to measure, comma-separated (default 4,8); each
                   task has --cpus-per-task 1
  --threads T      threads of the one-process run (default: all cores)
  --ikbench PATH   the ikbench binary (default build/release/benchmarks/ikbench)
  --timeout S      longest wait for one array and its merge (default 3600)
  -h, --help       this help

Prints, and writes to DIR/figures.txt: the machine, the load average before
and after, the wall time of the one-process run, and per array size the wall
time from submission to the end of the merge job, the longest task, the merge
and the verify times. Needs root, slurm-wlm and munge (see local_cluster.sh).
EOF
}

die() {
  echo "$prog: error: $*" >&2
  exit 2
}

out="" shards_list=4,8 threads="" ikbench="$repo/build/release/benchmarks/ikbench" timeout_s=3600
run_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    -h | --help) usage; exit 0 ;;
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    --shards) shards_list=${2:?--shards needs a list}; shift 2 ;;
    --threads) threads=${2:?--threads needs a number}; shift 2 ;;
    --ikbench) ikbench=${2:?--ikbench needs a path}; shift 2 ;;
    --timeout) timeout_s=${2:?--timeout needs seconds}; shift 2 ;;
    --) shift; run_args=("$@"); break ;;
    *) die "unknown option '$1' (the ikbench arguments go after --; see --help)" ;;
  esac
done
[ -n "$out" ] || die "--out DIR is required"
[ ${#run_args[@]} -gt 0 ] || die "no ikbench run arguments: give them after --"
[[ "$shards_list" =~ ^[0-9]+(,[0-9]+)*$ ]] || die "--shards '$shards_list': expected e.g. 4,8"
[ -x "$ikbench" ] || die "ikbench binary '$ikbench' not found or not executable"
threads=${threads:-$(nproc)}
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac
if [ -e "$out" ] && [ -n "$(ls -A "$out")" ]; then die "'$out' is not empty"; fi
mkdir -p "$out"
# The cluster's directory holds the munge socket: keep its path short.
cluster=$(mktemp -d /tmp/ikbench-cluster.XXXXXX)

cleanup() {
  "$here/local_cluster.sh" stop "$cluster" || true
  rm -rf -- "$cluster"
}
trap cleanup EXIT

report() { echo "$*" | tee -a "$out/figures.txt"; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }
secs() { printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)); }

report "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs, $(free -g | awk '/^Mem:/ {print $2}') GiB"
report "ikbench: $ikbench ($(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown revision))"
report "command: ikbench run $(printf '%q ' "${run_args[@]}")"
report "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

# One process.
t0=$(now_ms)
"$ikbench" run "${run_args[@]}" --threads "$threads" --out "$out/one" --progress none --no-summary >/dev/null
t1=$(now_ms)
solves=$(sed -n 's/^ *"solves": \([0-9]*\),*$/\1/p' "$out/one/run.json" | head -n 1)
report "one process, --threads $threads: $(secs $((t1 - t0))) s wall, $solves solves"

"$here/local_cluster.sh" start "$cluster" >/dev/null
export SLURM_CONF="$cluster/slurm.conf"

job_done() {  # job id: 0 when no task of it is pending or running
  ! scontrol -o show job "$1" 2>/dev/null | grep -qE 'JobState=(PENDING|RUNNING|CONFIGURING|COMPLETING)'
}

IFS=, read -r -a sizes <<<"$shards_list"
for n in "${sizes[@]}"; do
  t0=$(now_ms)
  # --no-check: the one-process run has just run these arguments.
  submitted=$("$here/run_array.sh" --shards "$n" --out "$out/array$n" --cpus-per-task 1 --ikbench "$ikbench" \
    --no-check -- "${run_args[@]}")
  merge_id=$(sed -n 's/^merge job: *\([0-9]*\).*/\1/p' <<<"$submitted")
  [ -n "$merge_id" ] || die "run_array.sh printed no merge job id: $submitted"
  deadline=$(($(date +%s) + timeout_s))
  until job_done "$merge_id"; do
    [ "$(date +%s)" -lt "$deadline" ] || die "the array of $n did not finish within $timeout_s s"
    sleep 0.2
  done
  t1=$(now_ms)
  scontrol -o show job "$merge_id" | grep -q 'JobState=COMPLETED' || die "merge job $merge_id did not complete"
  log="$out/array$n/slurm/logs/merge_$merge_id.out"
  merge_ms=$(sed -n 's/^merge wall time: \([0-9]*\) ms$/\1/p' "$log")
  verify_ms=$(sed -n 's/^verify wall time: \([0-9]*\) ms$/\1/p' "$log")
  longest=$(sed -n 's/^ *"wall_s": \([0-9.]*\),*$/\1/p' "$out"/array"$n"/shards/*/run.json | sort -g | tail -n 1)
  report "$n array tasks (--cpus-per-task 1, $(nproc) CPUs): $(secs $((t1 - t0))) s wall from submission to the end of the merge job; longest task's solving pass ${longest} s; merge $(secs "$merge_ms") s; verify $(secs "$verify_ms") s"
  /usr/bin/python3 "$repo/tests/slurm/compare_runs.py" "$out/one" "$out/array$n/merged" >/dev/null ||
    die "the merged result of $n tasks differs from the one-process run"
  report "  merged result of $n tasks equals the one-process run apart from the time columns"
done
report "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
