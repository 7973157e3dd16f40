"""The harness's verdict on every answer of a run: `ikbench verify RUN --verdicts FILE` writes it
(benchmarks/harness/verify.h, kVerdictColumns), and this reads it back, or runs the harness to get it.

    v = verdicts.from_harness(exe, run_dir)   # or verdicts.read(path)

One row per checked answer: its file (solves.csv or solutions.csv), family, problem, solver spec and
solution number (empty for a solve); the recomputed position and orientation errors; the verdicts
converged, within_limits, collision_free (empty off a scene) and borderline (an error within a
relative 1e-9 of its tolerance, whose converged verdict is the row's own claim). The verdict is
computed once, in C++; ikbench.analysis.verify holds its numpy recomputation to it.
"""

import os
import tempfile

import pandas as pd

from . import runner
from .results import ResultsError

COLUMNS = ["file", "family", "problem", "solver", "solution", "position_error", "orientation_error", "converged",
           "within_limits", "collision_free", "borderline"]
FLAGS = ["converged", "within_limits", "borderline"]


def read(path):
    """The verdicts file as a DataFrame (flags as bool, collision_free as 1.0 / 0.0 / NaN)."""
    try:
        df = pd.read_csv(path, dtype={"family": str, "solver": str, "solution": str, "file": str},
                         keep_default_na=False, na_values={"collision_free": [""]})
    except (OSError, ValueError, pd.errors.ParserError) as e:
        raise ResultsError(f"{path}: not a verdicts file of `ikbench verify --verdicts`: {e}") from e
    if list(df.columns) != COLUMNS:
        raise ResultsError(f"{path}: columns {list(df.columns)}, expected {COLUMNS}")
    for c in FLAGS:
        if not df[c].isin([0, 1]).all():
            raise ResultsError(f"{path}: column '{c}' holds a value other than 0 or 1")
        df[c] = df[c].astype(bool)
    if not df["collision_free"].isin([0.0, 1.0]).where(df["collision_free"].notna(), True).all():
        raise ResultsError(f"{path}: column 'collision_free' holds a value other than 0, 1 or nothing")
    return df


def from_harness(exe, run_dir, timeout=3600):
    """Runs `EXE verify RUN_DIR --verdicts TMP` (exit 0 or 1: agreeing or not, the verdicts are written)
    and reads them; a RunError names the command when it cannot run or refuses the run (exit 2)."""
    with tempfile.TemporaryDirectory(prefix="ikbench-verdicts-") as tmp:
        path = os.path.join(tmp, "verdicts.csv")
        runner.run([str(exe), "verify", str(run_dir), "--verdicts", path], timeout=timeout, ok=(0, 1))
        return read(path)


__all__ = ["COLUMNS", "read", "from_harness"]
