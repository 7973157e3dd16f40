#!/usr/bin/env bash
# Stands in for ikbench in slurm_array_test.sh: runs
#   IKBENCH <ikbench arguments...>
# unchanged, except for the first attempt at one shard: that attempt is
# stopped with SIGTERM (the way Slurm stops a job that runs out of time) once
# it has written finished solves to its solves.partial.csv, and this script
# then fails (exit status 1), leaving the shard incomplete. Until the
# interruption, ikbench runs only a quarter of the time (SIGSTOP/SIGCONT), so
# that the interruption falls inside the solving pass however fast the
# machine is. The marker file records that the first attempt is over.
set -euo pipefail

usage() {
  echo "Usage: $(basename "$0") --ikbench PATH --shard K/N --marker FILE -- <ikbench arguments...>"
}

ikbench="" shard="" marker=""
while [ $# -gt 0 ]; do
  case "$1" in
    -h | --help) usage; exit 0 ;;
    --ikbench) ikbench=${2:?--ikbench needs a path}; shift 2 ;;
    --shard) shard=${2:?--shard needs K/N}; shift 2 ;;
    --marker) marker=${2:?--marker needs a file}; shift 2 ;;
    --) shift; break ;;
    *) echo "error: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
[ -n "$ikbench" ] && [ -n "$shard" ] && [ -n "$marker" ] || { usage >&2; exit 2; }

args=("$@")
target=0 out=""
for ((i = 0; i < ${#args[@]}; i++)); do
  case "${args[i]}" in
    --shard) [ "${args[i + 1]:-}" = "$shard" ] && target=1 ;;
    --out) out=${args[i + 1]:-} ;;
  esac
done
if [ "$target" = 0 ] || [ -e "$marker" ]; then exec "$ikbench" "$@"; fi
[ -n "$out" ] || { echo "error: no --out in the ikbench arguments" >&2; exit 2; }
touch "$marker"

"$ikbench" "$@" &
pid=$!
while kill -0 "$pid" 2>/dev/null; do
  # Header and at least two finished solves.
  if [ "$(cat "$out/solves.partial.csv" 2>/dev/null | wc -l)" -ge 3 ]; then
    kill -TERM "$pid"
    break
  fi
  sleep 0.02
  kill -STOP "$pid" 2>/dev/null || true
  sleep 0.06
  kill -CONT "$pid" 2>/dev/null || true
done
kill -CONT "$pid" 2>/dev/null || true
rc=0
wait "$pid" || rc=$?
echo "interrupt_once.sh: shard $shard stopped by SIGTERM (ikbench exit status $rc)" >&2
exit 1
