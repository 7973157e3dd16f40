#!/usr/bin/env bash
# Runs one `ikbench run` (a suite, a sweep) as a Slurm job array, one shard per
# array task, plus a merge job that runs once every task has succeeded.
# docs/cluster.md explains the layout, the assumptions and the recovery of
# failed tasks; --help lists the options.
set -euo pipefail

prog=$(basename "$0")

usage() {
  cat <<EOF
Usage:
  $prog --shards N --out DIR [options] -- <ikbench run arguments...>
  $prog --resume --out DIR [--array LIST] [options]

Submits (sbatch) a job array of N tasks; array task i (0 <= i < N) runs
  ikbench run <arguments> --shard \$((i+1))/N --out DIR/shards/\$((i+1)) \\
      --threads C --progress lines --no-summary
and a merge job, --dependency=afterok:<array job>, that runs
  ikbench merge DIR/shards/1 ... DIR/shards/N --out DIR/merged
  ikbench verify DIR/merged
It prints the job ids and how to watch them. The merged results equal an
unsharded run of the same command apart from the time columns.

Layout of DIR (on a filesystem that every node mounts at the same path):
  DIR/shards/K/       results of shard K (ikbench run --shard K/N)
  DIR/merged/         the merged results
  DIR/slurm/          array.sbatch, merge.sbatch (the submitted scripts),
                      jobs.txt (job ids), logs/ (one log per task)

Options:
  --shards N            number of array tasks = shards (1 to 100000; Slurm's
                        MaxArraySize, often 1001, bounds it on most clusters)
  --out DIR             results root (see above); must hold no earlier results
                        unless --resume or --force is given
  --partition P         sbatch --partition (default: the cluster's default)
  --time T              time limit per array task, sbatch --time (e.g. 30,
                        2:00:00, 1-00:00:00; default: the partition's)
  --cpus-per-task C     CPUs per task, sbatch --cpus-per-task; also ikbench
                        --threads (default 1)
  --mem M               memory per task, sbatch --mem (e.g. 2G; default: the
                        partition's)
  --merge-time T        time limit of the merge job (default: --time)
  --merge-mem M         memory of the merge job (default: --mem); the merge
                        holds every row of the run in memory: about 4.5 times
                        the size of the merged solves.csv
  --max-running M       at most M array tasks at once (sbatch --array=...%M)
  --job-name NAME       job name (default ikbench); the merge job is NAME-merge
  --sbatch-arg ARG      one more sbatch option for both jobs, e.g.
                        --sbatch-arg=--account=proj --sbatch-arg=--qos=short
                        (repeatable)
  --ikbench PATH        the ikbench binary (default: ikbench on PATH, else
                        build/release/benchmarks/ikbench of this checkout); the
                        same build must be at this path on every node
  --resume              re-submit DIR/slurm/array.sbatch for the shards that are
                        not complete (a task resumes an interrupted shard with
                        ikbench --resume), then a new merge job; takes no
                        ikbench arguments
  --array LIST          with --resume: only these array task ids (sbatch --array
                        syntax, e.g. 2,5-7; task i runs shard i+1)
  --force               remove DIR/shards, DIR/merged and DIR/slurm first
  --no-check            do not check the ikbench arguments before submitting
                        (the check runs a tiny shard, 1/100000, here: a bad
                        suite or spec then fails at once, not in N tasks; it
                        prints the run's size and the number of specs)
  --dry-run             print the sbatch scripts and commands; submit nothing
  -h, --help            this help

The ikbench arguments must not contain --shard, --out, --threads, --progress,
--no-summary, --force or --resume: this script sets them.

A task whose ikbench fails leaves its shard incomplete; the merge job then does
not run (afterok; it is cancelled as its dependency can never be satisfied).
Re-submit the failed tasks with: $prog --resume --out DIR
EOF
}

die() {
  echo "$prog: error: $*" >&2
  exit 2
}

need_value() {
  [ $# -ge 2 ] && [ -n "$2" ] || die "$1 needs a value (see --help)"
}

shards="" out="" partition="" time_limit="" cpus=1 mem="" merge_time="" merge_mem="" max_running=""
job_name=ikbench ikbench="" array="" resume=0 force=0 dry_run=0 check=1
sbatch_extra=()
run_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    -h | --help) usage; exit 0 ;;
    --shards) need_value "$@"; shards=$2; shift 2 ;;
    --out) need_value "$@"; out=$2; shift 2 ;;
    --partition) need_value "$@"; partition=$2; shift 2 ;;
    --time) need_value "$@"; time_limit=$2; shift 2 ;;
    --cpus-per-task) need_value "$@"; cpus=$2; shift 2 ;;
    --mem) need_value "$@"; mem=$2; shift 2 ;;
    --merge-time) need_value "$@"; merge_time=$2; shift 2 ;;
    --merge-mem) need_value "$@"; merge_mem=$2; shift 2 ;;
    --max-running) need_value "$@"; max_running=$2; shift 2 ;;
    --job-name) need_value "$@"; job_name=$2; shift 2 ;;
    --sbatch-arg) need_value "$@"; sbatch_extra+=("$2"); shift 2 ;;
    --sbatch-arg=*) sbatch_extra+=("${1#--sbatch-arg=}"); shift ;;
    --ikbench) need_value "$@"; ikbench=$2; shift 2 ;;
    --array) need_value "$@"; array=$2; shift 2 ;;
    --resume) resume=1; shift ;;
    --force) force=1; shift ;;
    --dry-run) dry_run=1; shift ;;
    --no-check) check=0; shift ;;
    --) shift; run_args=("$@"); break ;;
    --*=*) set -- "${1%%=*}" "${1#*=}" "${@:2}" ;;  # --opt=value as --opt value
    *) die "unknown option '$1' (the ikbench arguments go after --; see --help)" ;;
  esac
done

is_uint() { [[ "$1" =~ ^[0-9]+$ ]]; }

[ -n "$out" ] || die "--out DIR is required"
is_uint "$cpus" && [ "$cpus" -ge 1 ] || die "--cpus-per-task '$cpus': expected a positive integer"
[ -z "$max_running" ] || { is_uint "$max_running" && [ "$max_running" -ge 1 ]; } ||
  die "--max-running '$max_running': expected a positive integer"
[ "$job_name" = "${job_name//[^A-Za-z0-9._-]/}" ] || die "--job-name '$job_name': use letters, digits, '.', '-', '_'"
[ "$resume" = 0 ] || [ "$force" = 0 ] || die "--resume and --force exclude each other"
[ -z "$array" ] || [ "$resume" = 1 ] || die "--array goes with --resume (a new submission runs every shard)"
[ -z "$array" ] || [[ "$array" =~ ^[0-9,-]+$ ]] || die "--array '$array': expected task ids like 2,5-7"

# DIR as an absolute path without a trailing slash (the tasks run elsewhere).
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac
out="${out%/}"
slurm_dir="$out/slurm"

if [ "$resume" = 1 ]; then
  [ -z "$shards" ] || die "--resume takes the shard count from $slurm_dir/array.sbatch; leave out --shards"
  [ ${#run_args[@]} -eq 0 ] || die "--resume re-submits $slurm_dir/array.sbatch as it is; give no ikbench arguments"
  [ -f "$slurm_dir/array.sbatch" ] && [ -f "$slurm_dir/merge.sbatch" ] ||
    die "--resume: $slurm_dir holds no array.sbatch / merge.sbatch (nothing submitted into '$out' by $prog)"
  shards=$(sed -n 's/^SHARDS=\([0-9]*\)$/\1/p' "$slurm_dir/array.sbatch")
  is_uint "$shards" || die "--resume: cannot read SHARDS= from $slurm_dir/array.sbatch"
else
  [ -n "$shards" ] || die "--shards N is required"
  is_uint "$shards" && [ "$shards" -ge 1 ] && [ "$shards" -le 100000 ] ||
    die "--shards '$shards': expected an integer from 1 to 100000"
  [ ${#run_args[@]} -gt 0 ] || die "no ikbench run arguments: give them after --, e.g. -- --suite quick"
  for a in "${run_args[@]}"; do
    case "$a" in
      --shard | --shard=* | --out | --out=* | --threads | --threads=* | --progress | --progress=* | --no-summary | \
        --force | --resume)
        die "'$a' is set by $prog (per task); leave it out of the ikbench arguments" ;;
    esac
  done
fi

# The ikbench binary, as an absolute path (on --resume, array.sbatch's).
if [ "$resume" = 1 ]; then
  [ -z "$ikbench" ] || die "--resume runs the ikbench of $slurm_dir/array.sbatch (shards of one run come from one build); leave out --ikbench"
  ikbench=$(sed -n 's/^IKBENCH=//p' "$slurm_dir/array.sbatch")
  ikbench=$(eval "printf '%s' $ikbench")  # written with printf %q
elif [ -z "$ikbench" ]; then
  if command -v ikbench >/dev/null 2>&1; then
    ikbench=$(command -v ikbench)
  else
    ikbench="$(cd "$(dirname "$0")/../.." && pwd)/build/release/benchmarks/ikbench"
  fi
fi
case "$ikbench" in /*) ;; *) ikbench="$PWD/$ikbench" ;; esac
[ -x "$ikbench" ] && [ -f "$ikbench" ] ||
  die "ikbench binary '$ikbench' not found or not executable (build it, or give --ikbench PATH)"

if [ "$dry_run" = 0 ]; then
  command -v sbatch >/dev/null 2>&1 || die "sbatch not found: this needs a Slurm client (Debian: slurm-client)"
fi

# Jobs of an earlier submission into DIR that Slurm still holds.
queued_jobs() {
  [ -f "$slurm_dir/jobs.txt" ] && command -v squeue >/dev/null 2>&1 || return 0
  local kind id
  while read -r kind id; do
    if squeue -h -j "$id" -o %i 2>/dev/null | grep -q .; then echo "$kind job $id"; fi
  done <"$slurm_dir/jobs.txt"
}

if [ "$dry_run" = 0 ] && { [ "$resume" = 1 ] || [ "$force" = 1 ]; }; then
  busy=$(queued_jobs)
  [ -z "$busy" ] || die "jobs of an earlier submission into '$out' are still queued or running:
$busy
wait for them to end, or cancel them (scancel ID), then try again"
fi

# Shards whose run.json does not say "complete": true (top-level key, as
# ikbench writes it).
shard_complete() { grep -q '^  "complete": true' "$out/shards/$1/run.json" 2>/dev/null; }

if [ "$resume" = 1 ]; then
  if [ -z "$array" ]; then
    todo=()
    for ((k = 1; k <= shards; k++)); do shard_complete "$k" || todo+=($((k - 1))); done
    array=$(IFS=,; echo "${todo[*]}")
    if [ -z "$array" ] && grep -q '^  "complete": true' "$out/merged/run.json" 2>/dev/null; then
      echo "every shard of '$out' and its merge are complete: nothing to do"
      exit 0
    fi
  fi
else
  nonempty() { [ -d "$1" ] && [ -n "$(ls -A "$1")" ]; }
  if [ "$force" = 0 ]; then
    for d in "$out/shards" "$out/merged" "$slurm_dir"; do
      ! nonempty "$d" || die "'$d' is not empty: give --force to replace the results in '$out', or --resume to complete them"
    done
  fi
fi

# The arguments, checked on a tiny shard of the run (a few solves at most).
if [ "$resume" = 0 ] && [ "$check" = 1 ]; then
  check_dir=$(mktemp -d "${TMPDIR:-/tmp}/ikbench-check.XXXXXX")
  if ! "$ikbench" run "${run_args[@]}" --shard 1/100000 --out "$check_dir/run" --threads 1 --progress none \
    --no-summary >"$check_dir/log" 2>&1; then
    sed 's/^/  /' "$check_dir/log" >&2
    rm -rf -- "$check_dir"
    die "ikbench run refuses these arguments (checked on shard 1/100000 here; --no-check skips the check)"
  fi
  sed -n 's/^ikbench: \(suite .* x [0-9]* solvers\):.*/checked: \1/p' "$check_dir/log"
  rm -rf -- "$check_dir"
fi

# --force: the earlier results go once the new submission is known to be good.
if [ "$force" = 1 ] && [ "$dry_run" = 0 ]; then
  rm -rf -- "$out/shards" "$out/merged" "$slurm_dir"
fi

# ---- the scripts ----
q() { printf '%q' "$1"; }
quoted_args=""
for a in "${run_args[@]}"; do quoted_args+=" $(q "$a")"; done

sbatch_lines() {  # name, time limit, cpus, memory
  echo "#SBATCH --job-name=$1"
  echo "#SBATCH --chdir=$(q "$PWD")"
  [ -z "$partition" ] || echo "#SBATCH --partition=$(q "$partition")"
  [ -z "$2" ] || echo "#SBATCH --time=$(q "$2")"
  echo "#SBATCH --ntasks=1"
  echo "#SBATCH --cpus-per-task=$3"
  [ -z "$4" ] || echo "#SBATCH --mem=$(q "$4")"
}

array_script() {
  cat <<EOF
#!/bin/bash
# One shard of an ikbench run per array task (written by scripts/slurm/run_array.sh).
$(sbatch_lines "$job_name" "$time_limit" "$cpus" "$mem")
#SBATCH --array=0-$((shards - 1))
#SBATCH --output=$(q "$slurm_dir/logs/array_%A_%a.out")
set -euo pipefail
IKBENCH=$(q "$ikbench")
OUT=$(q "$out")
SHARDS=$shards
THREADS=$cpus
ARGS=($quoted_args)

: "\${SLURM_ARRAY_TASK_ID:?this script runs as a Slurm array task (sbatch --array=0-\$((SHARDS - 1)))}"
k=\$((SLURM_ARRAY_TASK_ID + 1))
if [ "\$k" -lt 1 ] || [ "\$k" -gt "\$SHARDS" ]; then
  echo "error: array task \$SLURM_ARRAY_TASK_ID is outside 0-\$((SHARDS - 1))" >&2
  exit 2
fi
dir="\$OUT/shards/\$k"
mode=()
if [ -f "\$dir/run.json" ]; then
  if grep -q '^  "complete": true' "\$dir/run.json"; then
    echo "shard \$k/\$SHARDS in \$dir is complete: nothing to do"
    exit 0
  fi
  mode=(--resume)  # an interrupted or failed attempt: keep its finished solves
fi
echo "shard \$k/\$SHARDS on \$(hostname) (job \${SLURM_ARRAY_JOB_ID:-?}_\$SLURM_ARRAY_TASK_ID)\${mode[*]:+, \${mode[*]}}"
exec "\$IKBENCH" run "\${ARGS[@]}" --shard "\$k/\$SHARDS" --out "\$dir" --threads "\$THREADS" \\
  --progress lines --no-summary "\${mode[@]}"
EOF
}

merge_script() {
  cat <<EOF
#!/bin/bash
# Merges and verifies the shards of an ikbench run (written by scripts/slurm/run_array.sh).
$(sbatch_lines "$job_name-merge" "${merge_time:-$time_limit}" 1 "${merge_mem:-$mem}")
#SBATCH --output=$(q "$slurm_dir/logs/merge_%j.out")
set -euo pipefail
IKBENCH=$(q "$ikbench")
OUT=$(q "$out")
SHARDS=$shards

shards=()
for ((k = 1; k <= SHARDS; k++)); do shards+=("\$OUT/shards/\$k"); done
start=\$(date +%s%N)
"\$IKBENCH" merge "\${shards[@]}" --out "\$OUT/merged" --force
end=\$(date +%s%N)
echo "merge wall time: \$(( (end - start) / 1000000 )) ms"
"\$IKBENCH" verify "\$OUT/merged"
echo "verify wall time: \$(( (\$(date +%s%N) - end) / 1000000 )) ms"
EOF
}

array_opts=("${sbatch_extra[@]}")
merge_opts=("${sbatch_extra[@]}")
if [ "$resume" = 1 ]; then
  # Command-line options override the scripts' #SBATCH lines.
  [ -z "$partition" ] || { array_opts+=(--partition="$partition"); merge_opts+=(--partition="$partition"); }
  [ -z "$time_limit" ] || array_opts+=(--time="$time_limit")
  [ -z "${merge_time:-$time_limit}" ] || merge_opts+=(--time="${merge_time:-$time_limit}")
  [ -z "$mem" ] || array_opts+=(--mem="$mem")
  [ -z "${merge_mem:-$mem}" ] || merge_opts+=(--mem="${merge_mem:-$mem}")
fi
if [ -n "$array" ] || [ -n "$max_running" ]; then
  array_opts+=(--array="${array:-0-$((shards - 1))}${max_running:+%$max_running}")
fi
merge_opts+=(--kill-on-invalid-dep=yes)

if [ "$dry_run" = 1 ]; then
  if [ "$resume" = 0 ]; then
    echo "# $slurm_dir/array.sbatch"
    array_script
    echo
    echo "# $slurm_dir/merge.sbatch"
    merge_script
    echo
  fi
  show() { printf '%q ' "$@" | sed 's/ $//'; echo; }
  if [ "$resume" = 1 ] && [ -z "$array" ]; then
    echo "# every shard is complete: only the merge job would be submitted"
    show sbatch --parsable "${merge_opts[@]}" "$slurm_dir/merge.sbatch"
  else
    echo "# submission ($shards shards):"
    show sbatch --parsable "${array_opts[@]}" "$slurm_dir/array.sbatch"
    show sbatch --parsable --dependency=afterok:ARRAY_JOB_ID "${merge_opts[@]}" "$slurm_dir/merge.sbatch"
  fi
  exit 0
fi

mkdir -p "$out/shards" "$slurm_dir/logs"
if [ "$resume" = 0 ]; then
  array_script >"$slurm_dir/array.sbatch"
  merge_script >"$slurm_dir/merge.sbatch"
fi

submit() {  # prints the job id (sbatch --parsable prints "id" or "id;cluster")
  local id
  id=$(sbatch --parsable "$@") || die "sbatch $* failed"
  echo "${id%%;*}"
}

if [ "$resume" = 1 ] && [ -z "$array" ]; then
  echo "every shard of '$out' is complete: submitting the merge job only"
  merge_id=$(submit "${merge_opts[@]}" "$slurm_dir/merge.sbatch")
  echo "merge $merge_id" >>"$slurm_dir/jobs.txt"
  echo "merge job:  $merge_id"
else
  array_id=$(submit "${array_opts[@]}" "$slurm_dir/array.sbatch")
  echo "array $array_id" >>"$slurm_dir/jobs.txt"
  merge_id=$(submit --dependency=afterok:"$array_id" "${merge_opts[@]}" "$slurm_dir/merge.sbatch") ||
    die "the array job $array_id is submitted but the merge job is not; once the array has finished, run:
  sbatch ${merge_opts[*]} $slurm_dir/merge.sbatch"
  echo "merge $merge_id" >>"$slurm_dir/jobs.txt"
  echo "array job:  $array_id (${array:-0-$((shards - 1))} of $shards shards)"
  echo "merge job:  $merge_id (runs when every task of $array_id has succeeded)"
fi
cat <<EOF
watch:      squeue -j ${array_id:+$array_id,}$merge_id
logs:       $slurm_dir/logs/
results:    $out/merged (once the merge job has finished)
if a task fails (the merge job is then cancelled), re-submit the shards that
are not complete with:
            $0 --resume --out $(q "$out")
EOF
