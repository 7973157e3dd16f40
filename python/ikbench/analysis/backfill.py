"""`ikbench history backfill --commits N`: the history of the last N commits, measured now.

Each commit of the first-parent line (oldest first) is checked out in a git worktree, built with
the release preset (ccache as the compiler launcher when installed: consecutive commits share most
objects), and run there: the `quick` suite (`ikbench run`), the Google Benchmark binaries
(short, three repetitions, as scripts/run.sh) and `ikbench throughput` (short); the run is then
added to the store. A commit already in the store for this machine and suite is skipped; one that
does not build, or whose run fails or exceeds the time cap, is recorded in the store's `skipped`
table with the end of its log, and the next commit follows. The run directories stay in
--runs-dir (their Google Benchmark JSON and throughput.json are what results/history/ keeps).
"""

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from ..io.results import ResultsError
from ..io.safe_io import check_output_path, output_directory
from . import record
from ..io import store_queries as queries
from ..io.store_open import open_history


def _git(repo, *args, check=True):
    p = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    if check and p.returncode != 0:
        raise ResultsError(f"git {' '.join(args)}: {p.stderr.strip() or p.returncode}")
    return p.stdout.strip()


def commits(repo, n, rev="HEAD"):
    """The last n commits of the first-parent line ending at rev, oldest first."""
    out = _git(repo, "rev-list", "--first-parent", "-n", str(n), rev)
    return list(reversed(out.split())) if out else []


class _Clock:
    def __init__(self, cap):
        self.end = time.monotonic() + cap

    def left(self):
        left = self.end - time.monotonic()
        if left <= 0:
            raise subprocess.TimeoutExpired("backfill", 0)
        return left


def _run(cmd, log, clock, cwd=None, env=None):
    """Runs cmd with its output appended to `log`; True when it exits 0."""
    with open(log, "a", encoding="utf-8") as f:
        f.write("$ " + " ".join(str(c) for c in cmd) + "\n")
        f.flush()
        p = subprocess.run([str(c) for c in cmd], stdout=f, stderr=subprocess.STDOUT, cwd=cwd, env=env,
                           timeout=clock.left())
    return p.returncode == 0


def _tail(log, lines=15):
    try:
        return "\n".join(Path(log).read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def measure_commit(sha, args, repo, clock, log):
    """Builds commit `sha` in a worktree and runs it; returns the run directory, or raises
    (reason, detail) as a _Skip."""
    wt = Path(args.worktrees).resolve() / sha[:12]
    out = Path(args.runs_dir).resolve() / sha[:12]
    if wt.exists():
        _git(repo, "worktree", "remove", "--force", str(wt), check=False)
        shutil.rmtree(wt, ignore_errors=True)
    wt.parent.mkdir(parents=True, exist_ok=True)
    _git(repo, "worktree", "add", "--detach", str(wt), sha)
    try:
        configure = ["cmake", "--preset", "release", "-G", "Unix Makefiles", "-DIKBENCH_BUILD_TESTS=OFF"]
        if shutil.which("ccache"):
            configure += ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache", "-DCMAKE_C_COMPILER_LAUNCHER=ccache"]
        targets = ["ikbench"] + ([] if args.no_gbench else ["bench_kinematics", "bench_solvers"])
        if not (_run(configure, log, clock, cwd=wt) and
                _run(["cmake", "--build", "--preset", "release", "-j", str(args.jobs), "--target", *targets], log,
                     clock, cwd=wt)):
            raise _Skip("build failed", _tail(log))
        bench = wt / "build" / "release" / "benchmarks"
        if out.exists():
            shutil.rmtree(out)
        if not _run([bench / "ikbench", "run", "--suite", args.suite, "--threads", str(args.threads), "--no-trace",
                     "--out", out, "--progress", "none", "--no-summary"], log, clock, cwd=wt):
            raise _Skip("run failed", _tail(log))
        if not args.no_throughput:
            _run([bench / "ikbench", "throughput", "--solves", "20000", "--out", out], log, clock, cwd=wt)
        if not args.no_gbench:
            _run([bench / "bench_kinematics", "--benchmark_min_time=0.05", "--benchmark_repetitions=3",
                  f"--benchmark_out={out / 'bench_kinematics.json'}", "--benchmark_out_format=json"], log, clock,
                 cwd=wt)
            env = dict(os.environ, IKBENCH_BENCH_MAX_DOF="30")
            _run([bench / "bench_solvers", "--benchmark_min_time=0.02", "--benchmark_repetitions=3",
                  "--benchmark_filter=^(Solve|Iteration|PerIteration)/",
                  f"--benchmark_out={out / 'bench_solvers.json'}", "--benchmark_out_format=json"], log, clock,
                 cwd=wt, env=env)
        return out
    finally:
        if not args.keep:
            _git(repo, "worktree", "remove", "--force", str(wt), check=False)
            shutil.rmtree(wt, ignore_errors=True)


class _Skip(Exception):
    def __init__(self, reason, detail=""):
        super().__init__(reason)
        self.reason, self.detail = reason, detail


def main_from_args(args):
    if args.commits < 1:
        raise ResultsError(f"--commits {args.commits}: expected an integer >= 1")
    if args.time_cap <= 0:
        raise ResultsError(f"--time-cap {args.time_cap}: expected seconds > 0")
    repo = Path(args.repo or record.repo_dir()).resolve()
    with open_history(args.db, create=True, what="add the commits' runs") as store:
        output_directory(args.runs_dir, inputs=store.inputs)
        shas = commits(repo, args.commits, args.rev)
        done = skipped = 0
        for i, sha in enumerate(shas, 1):
            date, subject = record.commit_info(sha, repo)
            tag = f"[{i}/{len(shas)}] {sha[:10]} {(subject or '')[:50]}"
            have = queries.committed_run_count(store, sha, args.suite)
            if have:
                print(f"{tag}: already in the store", flush=True)
                continue
            log = Path(args.runs_dir).resolve() / f"{sha[:12]}.log"
            check_output_path(log, inputs=store.inputs)   # a regular file (appended to by the build), never the store
            log.unlink(missing_ok=True)
            t0 = time.monotonic()
            print(f"{tag}: building and running (log {log})", flush=True)
            try:
                out = measure_commit(sha, args, repo, _Clock(args.time_cap), log)
                rec = record.from_run_dir(out, repo=repo)
                for w in rec.get("warnings", []):
                    print(f"ikbench history: warning: {w}", file=sys.stderr, flush=True)
                rid, _ = store.add_record(rec, where=str(out))
                done += 1
                print(f"{tag}: added run {rid} in {time.monotonic() - t0:.0f} s", flush=True)
            except _Skip as e:
                store.add_skipped(sha, e.reason, commit_date=date, subject=subject, detail=e.detail)
                skipped += 1
                print(f"{tag}: {e.reason}, skipped (recorded; log {log})", flush=True)
            except subprocess.TimeoutExpired:
                store.add_skipped(sha, "time cap", commit_date=date, subject=subject,
                                  detail=f"over {args.time_cap:.0f} s\n{_tail(log)}")
                skipped += 1
                print(f"{tag}: over the time cap of {args.time_cap:.0f} s, skipped (recorded)", flush=True)
            except ResultsError as e:
                store.add_skipped(sha, "unreadable run", commit_date=date, subject=subject, detail=str(e))
                skipped += 1
                print(f"{tag}: its run could not be read ({e}), skipped (recorded)", flush=True)
        print(f"backfill: {done} commits added, {skipped} skipped, into {store.name}")
    sys.stdout.flush()
    return 0
