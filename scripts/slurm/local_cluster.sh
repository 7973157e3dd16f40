#!/usr/bin/env bash
# A throw-away single-node Slurm cluster on this machine, for trying
# run_array.sh and for its test (tests/slurm/): munged with a key generated in
# DIR, slurmctld and slurmd from the Debian packages with a generated
# slurm.conf (this node's real CPUs and memory, free ports, state, spool and
# logs in DIR), all running as root.
set -euo pipefail

prog=$(basename "$0")

usage() {
  cat <<EOF
Usage:
  $prog start DIR    start munged, slurmctld and slurmd with everything in DIR
                     (created; must be empty), wait until the node is idle
  $prog stop DIR     cancel the cluster's jobs, stop its daemons by their PIDs
                     (DIR/pids), leave DIR in place
  $prog status DIR   print the daemons that run and the node's state
  -h, --help         this help

After start, point the Slurm commands at the cluster with
  export SLURM_CONF=DIR/slurm.conf
then e.g. scripts/slurm/run_array.sh --shards 4 --out RESULTS -- --suite quick.

Needs root and the Debian packages slurm-wlm and munge (scripts/setup.sh).
The node has one partition, 'local' (the default), CPUs allocated one by one
(SelectType=select/cons_tres, CR_CPU), ProctrackType=proctrack/linuxproc,
TaskPlugin=task/none, no accounting (sacct does not work; scontrol show job
does, for an hour after a job ends).

Exit status: 0 done, 2 bad command, 3 the cluster cannot start here (not
root, a package missing, a daemon that does not come up: the reason is
printed), 1 other errors.
EOF
}

die() {
  echo "$prog: error: $*" >&2
  exit "${2:-1}"
}
cannot_start() {
  echo "$prog: cannot start the cluster: $*" >&2
  exit 3
}

[ $# -ge 1 ] || { usage >&2; exit 2; }
case "$1" in
  -h | --help) usage; exit 0 ;;
  start | stop | status) cmd=$1 ;;
  *) echo "$prog: error: unknown command '$1'" >&2; usage >&2; exit 2 ;;
esac
[ $# -eq 2 ] && [ -n "$2" ] || die "$cmd needs DIR (see --help)" 2
dir=$2
case "$dir" in /*) ;; *) dir="$PWD/$dir" ;; esac
dir=${dir%/}

# The daemons recorded in DIR/pids (name pid), each still running with DIR in
# its command line (so that a PID reused by another process is left alone).
running() {
  [ -f "$dir/pids" ] || return 0
  local name pid
  while read -r name pid; do
    [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$dir/" && echo "$name $pid"
  done <"$dir/pids"
  return 0
}

stop_cluster() {
  local live
  live=$(running)
  [ -n "$live" ] || return 0
  # Jobs first, while slurmctld and slurmd still run: no job outlives the cluster.
  if grep -q '^slurmctld ' <<<"$live"; then
    local jobs
    jobs=$(SLURM_CONF="$dir/slurm.conf" squeue -h -o %A 2>/dev/null | sort -u || true)
    if [ -n "$jobs" ]; then
      # shellcheck disable=SC2086
      SLURM_CONF="$dir/slurm.conf" scancel $jobs 2>/dev/null || true
      for _ in $(seq 40); do
        [ -z "$(SLURM_CONF="$dir/slurm.conf" squeue -h -o %A 2>/dev/null)" ] && break
        sleep 0.25
      done
    fi
  fi
  # slurmd, then slurmctld, then munged.
  local name pid order=(slurmd slurmctld munged)
  for n in "${order[@]}"; do
    while read -r name pid; do
      [ "$name" = "$n" ] || continue
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      if kill -0 "$pid" 2>/dev/null; then
        echo "$prog: $name (pid $pid) did not stop on SIGTERM: SIGKILL" >&2
        kill -9 "$pid" 2>/dev/null || true
      fi
    done <<<"$live"
  done
}

case "$cmd" in
  stop)
    stop_cluster
    exit 0
    ;;
  status)
    live=$(running)
    [ -n "$live" ] || { echo "no daemon of $dir runs"; exit 0; }
    echo "$live"
    SLURM_CONF="$dir/slurm.conf" sinfo -N -o '%N %t %c %m' 2>/dev/null || true
    exit 0
    ;;
esac

# ---- start ----
[ "$(id -u)" -eq 0 ] || cannot_start "it needs root (slurmd starts the jobs; munged and slurmctld run as root here)"
for b in munged munge unmunge slurmctld slurmd sinfo squeue scancel /usr/bin/python3; do
  command -v "$b" >/dev/null 2>&1 ||
    cannot_start "'$b' is not installed: Slurm (Debian: slurm-wlm) and munge are needed; scripts/setup.sh installs them"
done
if [ -e "$dir" ] && [ -n "$(ls -A "$dir")" ]; then die "'$dir' is not empty" 2; fi
# Unix socket paths are limited to 108 bytes.
[ ${#dir} -le 80 ] || die "'$dir' is too long for the munge socket in it: use a path of at most 80 characters" 2
mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/log"
chmod 755 "$dir"
chmod 711 "$dir/munge"
: >"$dir/pids"

# A failed start stops what did start.
started=0
trap '[ "$started" = 1 ] || stop_cluster' EXIT

# munged
dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$dir/munge/munge.key"
sock="$dir/munge/munge.socket"
munged --foreground --force --key-file="$dir/munge/munge.key" --socket="$sock" \
  --pid-file="$dir/munge/munged.pid" --seed-file="$dir/munge/munged.seed" \
  --log-file="$dir/log/munged.log" </dev/null >"$dir/log/munged.out" 2>&1 &
echo "munged $!" >>"$dir/pids"
munge_ok() { munge -S "$sock" -n </dev/null 2>/dev/null | unmunge -S "$sock" >/dev/null 2>&1; }
for _ in $(seq 100); do munge_ok && break; sleep 0.1; done
munge_ok || cannot_start "munged did not start: $(tail -n 3 "$dir/log/munged.out" | tr '\n' ' ')"

# slurm.conf: the node as slurmd sees it.
node_line=$(slurmd -C | head -n 1)
field() { sed -n "s/.*\b$1=\([0-9]*\).*/\1/p" <<<"$node_line"; }
cpus=$(field CPUs) memory=$(field RealMemory)
[ -n "$cpus" ] && [ -n "$memory" ] || cannot_start "slurmd -C did not describe this node: '$node_line'"
boards=$(field Boards) sockets=$(field SocketsPerBoard) cores=$(field CoresPerSocket) threads=$(field ThreadsPerCore)
read -r ctld_port slurmd_port < <(/usr/bin/python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
host=$(hostname -s)
: >"$dir/plugstack.conf"
cat >"$dir/slurm.conf" <<EOF
# Generated by scripts/slurm/local_cluster.sh: a single-node cluster in $dir.
ClusterName=ikbench-local
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$sock
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
PlugStackConfig=$dir/plugstack.conf
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
MinJobAge=3600
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus Boards=${boards:-1} SocketsPerBoard=${sockets:-1} CoresPerSocket=${cores:-$cpus} ThreadsPerCore=${threads:-1} RealMemory=$memory State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF

slurmctld -D -c -f "$dir/slurm.conf" </dev/null >"$dir/log/slurmctld.out" 2>&1 &
echo "slurmctld $!" >>"$dir/pids"
slurmd -D -f "$dir/slurm.conf" </dev/null >"$dir/log/slurmd.out" 2>&1 &
echo "slurmd $!" >>"$dir/pids"
state=""
for _ in $(seq 120); do
  state=$(SLURM_CONF="$dir/slurm.conf" sinfo -h -n "$host" -o %t 2>/dev/null || true)
  [ "$state" = idle ] && break
  [ "$(running | wc -l)" -eq 3 ] || break
  sleep 0.5
done
[ "$state" = idle ] || cannot_start "the Slurm daemons did not come up (node state '${state:-unknown}'): \
slurmctld: $(tail -n 2 "$dir/log/slurmctld.out" | tr '\n' ' ') slurmd: $(tail -n 2 "$dir/log/slurmd.out" | tr '\n' ' ')"
started=1
echo "cluster up: node $host, $cpus CPUs, $memory MB, partition 'local'; daemons: $(tr '\n' ' ' <"$dir/pids")"
echo "export SLURM_CONF=$dir/slurm.conf"
echo "stop it with: $0 stop $dir"
