"""The one way the analysis library runs the harness binary (`ikbench run ...`): a command with an
optional timeout, its output captured (stdout and stderr interleaved, as a terminal shows them)
and, when asked, streamed line by line and logged to a file by the output rule of ikbench.io.safe_io.
Every failure is a ResultsError that says what ran and why it failed: the binary missing or not
executable, the timeout, or a non-zero exit with the last lines of its output.

    done = runner.run([exe, "run", "--suite", "quick", ...], timeout=600, log_path=out / "run.log")
    done.output, done.seconds

`ikbench tune` (ikbench.analysis.tune) and scripts/arm_table.py run the harness through here; the binary
is passed to them as an argument (`--ikbench PATH`), never through the environment.
"""

import os
import re
import shlex
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from .results import ResultsError
from .safe_io import atomic_write_text, check_output_path


class RunError(ResultsError):
    """The harness could not be run, timed out or failed (exit 2 of the command that ran it)."""


@dataclass
class Completed:
    args: list
    returncode: int
    output: str
    seconds: float

    @property
    def command(self):
        return " ".join(quote(a) for a in self.args)


def quote(a):
    """`a` as a shell would need it (plain when it is plain)."""
    a = str(a)
    return a if re.fullmatch(r"[A-Za-z0-9_./=:,@+-]+", a) else shlex.quote(a)


def find_harness(given=None):
    """The harness binary: `given` (--ikbench PATH), else $IKBENCH_CLI, else this source tree's
    build/release/benchmarks/ikbench, else `ikbench` on PATH. RunError when `given` is not an
    executable file or nothing is found."""
    root = Path(__file__).resolve().parents[3]
    if given:
        if Path(given).is_file() and os.access(given, os.X_OK):
            return str(Path(given).resolve())
        raise RunError(f"--ikbench '{given}': not an executable file")
    for c in (os.environ.get("IKBENCH_CLI"), str(root / "build" / "release" / "benchmarks" / "ikbench"),
              shutil.which("ikbench")):
        if c and Path(c).is_file() and os.access(c, os.X_OK):
            return str(Path(c).resolve())
    raise RunError("the ikbench harness was not found: pass --ikbench PATH (`ikbench tune` passes its own path)")


def run(args, *, timeout=None, log_path=None, inputs=(), stream=None, check=True, ok=(0,), env=None):
    """Runs `args`; returns a Completed. `timeout` in seconds (None: no limit); `log_path`: the
    command line and its output are written there (checked before the run, so a bad path is
    refused before the work); `stream(line)` sees each line of output as it comes; `check`: an
    exit status not in `ok` is a RunError. `env` replaces the environment (default: this process's)."""
    args = [str(a) for a in args]
    if log_path is not None:
        check_output_path(log_path, inputs=inputs)
    start = time.monotonic()
    try:
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                                stdin=subprocess.DEVNULL)
    except OSError as e:
        raise RunError(f"cannot run {quote(args[0])}: {e.strerror or e}") from None
    lines, timed_out = [], False
    try:
        if stream is None:
            out, _ = proc.communicate(timeout=timeout)
            lines = [out.decode("utf-8", errors="replace")]
        else:
            deadline = None if timeout is None else start + timeout
            for raw in proc.stdout:
                line = raw.decode("utf-8", errors="replace")
                lines.append(line)
                stream(line.rstrip("\n"))
                if deadline is not None and time.monotonic() > deadline:
                    raise subprocess.TimeoutExpired(args, timeout)
            proc.wait(timeout=None if deadline is None else max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        timed_out = True
        proc.kill()
        rest, _ = proc.communicate()
        lines.append(rest.decode("utf-8", errors="replace") if rest else "")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    done = Completed(args, proc.returncode, "".join(lines), time.monotonic() - start)
    if log_path is not None:
        atomic_write_text(log_path, "$ " + done.command + "\n" + done.output, inputs=inputs)
    where = f" (log: {log_path})" if log_path is not None else ""
    if timed_out:
        raise RunError(f"`{_name(args)}` did not finish within {timeout:g} s{where}")
    if check and done.returncode not in ok:
        tail = done.output.strip().splitlines()[-3:]
        raise RunError(f"`{_name(args)}` failed (exit {done.returncode}): " + " | ".join(tail) + where)
    return done


def _name(args):
    """`ikbench run` for the harness, else the program's name."""
    i = next((k for k, a in enumerate(args) if Path(a).name == "ikbench"), None)
    if i is not None:
        return " ".join(["ikbench"] + args[i + 1:i + 2])
    return Path(args[0]).name
