#!/usr/bin/env bash
# End-to-end test of scripts/slurm/run_array.sh on a real single-node Slurm
# cluster that this script brings up and tears down itself with
# scripts/slurm/local_cluster.sh: munged (with a key generated in a temp dir),
# slurmctld and slurmd from the Debian packages, a generated slurm.conf (the
# node's real CPUs and memory, free ports, state and spool in the temp dir),
# everything running as root.
#
#   1. an unsharded reference run: ikbench run --suite quick (with traces),
#      every time budget removed, the suite's and the specs' (see below);
#   2. the same command as a 4-task array through run_array.sh: the merge job
#      must complete and its result equal the reference apart from the time
#      columns (tests/slurm/compare_runs.py), and ikbench verify must pass;
#   3. the same again with shard 2 interrupted on its first attempt (SIGTERM
#      once it has written finished solves): that task fails, the merge job
#      must not run, the shard must be left incomplete; run_array.sh --resume
#      must re-submit that task alone, which resumes the shard, and the new
#      merge job's result must equal the reference too.
#
# Exit status: 0 passed, 1 failed, 77 skipped (not root, Slurm or munge not
# installed, or the daemons do not start: local_cluster.sh's reason is printed).
set -euo pipefail

usage() {
  cat <<EOF
Usage: $(basename "$0") --ikbench PATH [--timeout SECONDS] [--deadline SECONDS] [--keep]

  --ikbench PATH       the ikbench binary under test
  --timeout SECONDS    longest wait for each merge job (default 150)
  --deadline SECONDS   the whole test fails (and cleans up) after this long
                       (default 540: below ctest's TIMEOUT, which would kill
                       the test without letting it stop its daemons)
  --keep               keep the temp dir (logs, results) instead of removing it
  -h, --help           this help
EOF
}

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
ikbench="" timeout_s=150 deadline_s=540 keep=0
while [ $# -gt 0 ]; do
  case "$1" in
    -h | --help) usage; exit 0 ;;
    --ikbench) ikbench=${2:?--ikbench needs a path}; shift 2 ;;
    --timeout) timeout_s=${2:?--timeout needs seconds}; shift 2 ;;
    --deadline) deadline_s=${2:?--deadline needs seconds}; shift 2 ;;
    --keep) keep=1; shift ;;
    *) echo "error: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[ -n "$ikbench" ] || { echo "error: --ikbench PATH is required" >&2; exit 2; }
[ -x "$ikbench" ] || { echo "error: ikbench binary '$ikbench' not found or not executable" >&2; exit 1; }

SKIP=77
skip() {
  echo "SKIPPED: $*"
  exit "$SKIP"
}
fail() {
  echo "FAILED: $*" >&2
  exit 1
}
step() { echo "== $(date +%T) $*"; }

# ---- can it run here? ----
[ -x /usr/bin/python3 ] || skip "/usr/bin/python3 is needed to compare the results"
cluster_sh="$repo/scripts/slurm/local_cluster.sh"

# ---- the temp dir, the cluster and the cleanup ----
tmp=$(mktemp -d /tmp/ikbench-slurm.XXXXXX)
cluster="$tmp/cluster"
watchdog=""
cleanup() {
  local rc=$?
  [ -z "$watchdog" ] || kill "$watchdog" 2>/dev/null || true
  # Cancels the cluster's jobs, then stops slurmd, slurmctld and munged by
  # their PIDs (recorded in $cluster/pids).
  "$cluster_sh" stop "$cluster" || echo "warning: stopping the test cluster failed" >&2
  if [ "$rc" -ne 0 ] && [ "$rc" -ne "$SKIP" ]; then
    for f in "$cluster"/log/*.log "$tmp"/run*/slurm/logs/*; do
      [ -f "$f" ] && { echo "---- $f (last lines)"; tail -n 15 "$f"; }
    done
  fi
  if [ "$keep" = 1 ]; then echo "kept: $tmp"; else rm -rf -- "$tmp"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'echo "FAILED: interrupted (or past the --deadline of $deadline_s s)" >&2; exit 130' INT TERM
main_pid=$$
(
  trap 'kill "$sleeper" 2>/dev/null; exit 0' TERM
  sleep "$deadline_s" &
  sleeper=$!
  wait "$sleeper" && kill -TERM "$main_pid"
) >/dev/null 2>&1 &
watchdog=$!

step "starting a single-node Slurm cluster (scripts/slurm/local_cluster.sh)"
t_start=$(date +%s)
rc=0
started=$("$cluster_sh" start "$cluster" 2>&1) || rc=$?
[ "$rc" -ne 3 ] || skip "${started#*: }"
[ "$rc" -eq 0 ] || fail "local_cluster.sh start failed ($rc): $started"
echo "$started" | head -n 1
export SLURM_CONF="$cluster/slurm.conf"
cpus=$(sed -n 's/^NodeName=.* CPUs=\([0-9]*\) .*/\1/p' "$SLURM_CONF")
step "cluster up after $(($(date +%s) - t_start)) s"

# ---- helpers ----
# Waits for a job to leave the queue; prints its final state(s), one per task.
wait_job() {
  local id=$1 deadline=$(($(date +%s) + timeout_s)) states
  while :; do
    states=$(scontrol -o show job "$id" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | sort -u)
    [ -n "$states" ] || fail "job $id is not known to slurmctld"
    if ! grep -qE '^(PENDING|RUNNING|CONFIGURING|COMPLETING|SUSPENDED|REQUEUED|RESIZING)$' <<<"$states"; then
      echo "$states"
      return 0
    fi
    [ "$(date +%s)" -lt "$deadline" ] || {
      squeue >&2 || true
      fail "job $id did not finish within $timeout_s s (states: $(echo $states))"
    }
    sleep 1
  done
}
task_state() {  # array job id, task id
  scontrol -o show job "$1_$2" | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'
}
job_id_from() {  # "array" | "merge", run_array.sh's output
  sed -n "s/^$1 job: *\([0-9][0-9]*\).*/\1/p" <<<"$2"
}
run_array() {
  "$repo/scripts/slurm/run_array.sh" "$@"
}

# ---- 1. the unsharded reference ----
# The quick suite without any time budget: a budget that binds (a solve slowed
# down by the other jobs of a shared machine) changes a solve's status, and
# ikbench's results are deterministic only while no time budget binds. The
# suite's time_budget_us goes, and so does every spec's own: `auto` restarts
# within a 5 ms time_budget_us, which a traced solve on a loaded machine can reach.
# time_budget_us=0 after a spec's other keys overrides a preset's value.
suite=$("$ikbench" list suites | sed -n 's/^ *\(\/.*\/quick\.json\)$/\1/p' | head -n 1)
[ -f "$suite" ] || fail "ikbench list suites names no quick.json"
/usr/bin/python3 - "$suite" "$tmp/quick.json" <<'PY'
import json, sys
suite = json.load(open(sys.argv[1]))
suite.setdefault("options", {})["time_budget_us"] = 0
suite["solvers"] = [spec + ":time_budget_us=0" for spec in suite["solvers"]]
json.dump(suite, open(sys.argv[2], "w"), indent=1)
PY
args=(--suite "$tmp/quick.json")
step "reference: ikbench run ${args[*]} (unsharded)"
"$ikbench" run "${args[@]}" --out "$tmp/ref" --threads "$cpus" --progress none --no-summary >/dev/null
/usr/bin/python3 "$here/compare_runs.py" --self-test "$tmp/ref"

# ---- 2. a 4-task array ----
step "run_array.sh --shards 4 -- ${args[*]}"
t0=$(date +%s)
out=$(run_array --shards 4 --out "$tmp/run1" --cpus-per-task 1 --time 10 --mem 1G --job-name ikbench-test \
  --ikbench "$ikbench" -- "${args[@]}")
echo "$out"
array_id=$(job_id_from array "$out") merge_id=$(job_id_from merge "$out")
[ -n "$array_id" ] && [ -n "$merge_id" ] || fail "run_array.sh printed no job ids"
[ "$(wait_job "$merge_id")" = COMPLETED ] || fail "merge job $merge_id did not complete: $(wait_job "$merge_id")"
step "array and merge done in $(($(date +%s) - t0)) s"
for i in 0 1 2 3; do
  [ "$(task_state "$array_id" "$i")" = COMPLETED ] || fail "array task ${array_id}_$i: $(task_state "$array_id" "$i")"
  grep -q '"index": '$((i + 1)) "$tmp/run1/shards/$((i + 1))/run.json" || fail "shard $((i + 1)) has another index"
done
grep -q "merge wall time" "$tmp"/run1/slurm/logs/merge_"$merge_id".out || fail "the merge job's log has no merge line"
/usr/bin/python3 "$here/compare_runs.py" "$tmp/ref" "$tmp/run1/merged"
"$ikbench" verify "$tmp/run1/merged" >"$tmp/verify1.txt" || fail "ikbench verify failed on the merged run"
step "ikbench verify: $(tail -n 1 "$tmp/verify1.txt")"

# ---- 3. a failed task, then --resume ----
# The first attempt at shard 2 is stopped by SIGTERM once it has finished
# some solves, and its task fails (tests/slurm/interrupt_once.sh).
wrapper="$tmp/ikbench-interrupt-once"
printf '#!/bin/sh\nexec %q --ikbench %q --shard 2/4 --marker %q -- "$@"\n' \
  "$here/interrupt_once.sh" "$ikbench" "$tmp/interrupted-once" >"$wrapper"
chmod +x "$wrapper"
step "run_array.sh --shards 4 with shard 2 interrupted once"
out=$(run_array --shards 4 --out "$tmp/run2" --cpus-per-task 1 --time 10 --ikbench "$wrapper" -- "${args[@]}")
echo "$out"
array_id=$(job_id_from array "$out") merge_id=$(job_id_from merge "$out")
[ -n "$array_id" ] && [ -n "$merge_id" ] || fail "run_array.sh printed no job ids"
merge_state=$(wait_job "$merge_id")
wait_job "$array_id" >/dev/null
[ "$merge_state" = CANCELLED ] || fail "the merge job should have been cancelled (afterok), it ended $merge_state"
[ ! -e "$tmp/run2/merged/run.json" ] || fail "the merge job ran although a task failed"
[ "$(task_state "$array_id" 1)" = FAILED ] || fail "task ${array_id}_1 should have failed: $(task_state "$array_id" 1)"
for i in 0 2 3; do
  [ "$(task_state "$array_id" "$i")" = COMPLETED ] || fail "array task ${array_id}_$i: $(task_state "$array_id" "$i")"
done
grep -q '^  "complete": false' "$tmp/run2/shards/2/run.json" || fail "shard 2 should be incomplete after the failure"
kept=$(($(wc -l <"$tmp/run2/shards/2/solves.partial.csv") - 1))
step "task 1 failed, merge job $merge_id cancelled, shard 2 kept $kept finished solves"

out=$(run_array --resume --out "$tmp/run2")
echo "$out"
grep -q '^array job: *[0-9]* (1 of 4 shards)' <<<"$out" || fail "--resume should re-submit task 1 alone"
array_id=$(job_id_from array "$out") merge_id=$(job_id_from merge "$out")
[ "$(wait_job "$merge_id")" = COMPLETED ] || fail "merge job $merge_id after --resume did not complete"
grep -q -- '--resume' "$tmp"/run2/slurm/logs/array_"$array_id"_1.out || fail "the re-submitted task did not resume its shard"
resumed=$(sed -n 's/^ *"resumed": \([0-9]*\).*/\1/p' "$tmp/run2/shards/2/run.json")
[ -n "$resumed" ] && [ "$resumed" -ge 1 ] && [ "$resumed" -le "$kept" ] ||
  fail "shard 2 took over ${resumed:-no} solves of the $kept its first attempt finished"
/usr/bin/python3 "$here/compare_runs.py" "$tmp/ref" "$tmp/run2/merged"
"$ikbench" verify "$tmp/run2/merged" >"$tmp/verify2.txt" || fail "ikbench verify failed on the resumed run"
step "PASSED"
