#!/usr/bin/env python3
"""The history tests against PostgreSQL: a throwaway cluster, the same pytest files, then stopped.

    /usr/bin/python3 tests/history/pg_cluster.py [PYTEST ARGS...]

Creates a cluster with Debian's server binaries (/usr/lib/postgresql/*/bin: initdb, pg_ctl) in a
temporary directory, listening only on a Unix socket in that directory (no TCP port), with trust
authentication on that socket: the directory is mode 0700, so only its owner (and root) can reach
it. The server refuses to run as root, so under root the cluster belongs to an unprivileged user:
`nobody`, through runuser. pytest then runs tests/history with IKBENCH_HISTORY_PG set to the
cluster's URL (conftest.py creates a database per test); the server is stopped with pg_ctl and, if
it is still there, by the PID in its postmaster.pid; the directory is removed.

Exit status: pytest's; 77 (skipped, ctest SKIP_RETURN_CODE) with a line saying why when the server
binaries or psycopg2 are absent (./scripts/setup.sh installs postgresql and python3-psycopg2) or
no unprivileged user is at hand.
"""

import glob
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
SKIP = 77
USER = "ikbench"   # the cluster's superuser role


def skip(why):
    print(f"SKIP: {why}", flush=True)
    sys.exit(SKIP)


def server_bin():
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[4])
                   if Path(p).parts[4].isdigit() else 0)
    if not found:
        skip("no PostgreSQL server binaries (/usr/lib/postgresql/*/bin/initdb); apt-get install postgresql")
    return Path(found[-1]).parent


def as_owner(cmd, owner):
    """The command run as the cluster's owner (itself when not root)."""
    if owner is None:
        return cmd
    return ["runuser", "-u", owner, "--"] + cmd


def main(argv):
    try:
        import psycopg2  # noqa: F401
    except ImportError:
        skip("psycopg2 is not installed; apt-get install python3-psycopg2")
    bindir = server_bin()
    owner = None
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("nobody")
        except KeyError:
            skip("running as root and no user 'nobody' to own the cluster")
        if not shutil.which("runuser"):
            skip("running as root and no runuser to start the server as 'nobody'")
        owner = "nobody"
    tmp = Path(tempfile.mkdtemp(prefix="ikbench-pg-"))
    data, sock = tmp / "data", tmp
    if owner:
        pw = pwd.getpwnam(owner)
        os.chown(tmp, pw.pw_uid, pw.pw_gid)
    os.chmod(tmp, 0o700)
    log = tmp / "server.log"
    env = dict(os.environ, LC_ALL="C.UTF-8")
    pid = None
    try:
        p = subprocess.run(as_owner([str(bindir / "initdb"), "-D", str(data), "-U", USER, "--auth=trust",
                                     "--encoding=UTF8", "--no-sync"], owner), capture_output=True, text=True, env=env,
                           cwd=tmp)
        if p.returncode != 0:
            print(p.stdout + p.stderr)
            print("FAIL: initdb failed")
            return 1
        opts = f"-k {sock} -c listen_addresses='' -c fsync=off -c max_connections=40"
        p = subprocess.run(as_owner([str(bindir / "pg_ctl"), "-D", str(data), "-l", str(log), "-o", opts, "-w",
                                     "-t", "60", "start"], owner), capture_output=True, text=True, env=env, cwd=tmp)
        pidfile = data / "postmaster.pid"
        if pidfile.exists():
            pid = int(pidfile.read_text().split()[0])
        if p.returncode != 0:
            print(p.stdout + p.stderr + (log.read_text() if log.exists() else ""))
            print("FAIL: the server did not start")
            return 1
        url = f"postgresql:///postgres?host={sock}&user={USER}"
        print(f"PostgreSQL {bindir.parent.name} on the socket in {sock} (server pid {pid})", flush=True)
        test_env = dict(os.environ, IKBENCH_HISTORY_PG=url, PYTHONPATH=str(REPO / "python"),
                        PYTHONDONTWRITEBYTECODE="1", MPLBACKEND="Agg")
        args = argv or [str(HERE)]
        return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
                              env=test_env).returncode
    finally:
        if data.exists():
            subprocess.run(as_owner([str(bindir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "-t", "30", "stop"],
                                    owner), capture_output=True, env=env, cwd=tmp)
        if pid is not None:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                pass
            else:
                os.kill(pid, signal.SIGQUIT)
                time.sleep(1)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
