"""`python3 -m ikbench tune`: tune a solver grid on one set of problems, evaluate the chosen point
on another set it never saw, and report both (docs/tuning.md).

    tune --solvers GRID --tune-on SET --evaluate-on SET [--criterion C] [--reference SPEC]
         [--threads N] [--out DIR] [--runner-ups K] [--allow-overlap] [--force] [--ikbench PATH]

1. `ikbench run` runs every point of GRID (the `--solvers` syntax of `ikbench run`, grids and
   presets included) on the tuning set;
2. the criterion picks one point from the tuning set's figures;
3. `ikbench run` runs that point alone (and the reference, if any) on the evaluation set;
4. tune.json and tune.md in DIR give the chosen point's figures on the tuning set beside its
   figures on the evaluation set (with intervals), the runner-ups, and any overlap of the sets.

Every figure comes from `ikbench.figures` (success = converged and within limits over all solves,
Wilson intervals; bootstrap intervals on times); the set figures below pool or combine them.

A SET is one or more ITEMs joined by '+'; an ITEM is `SUITE[@SEED][:FAMILY,FAMILY...]`: a
shipped suite's name or a suite file, optionally another seed (as `ikbench run --seed`), and
optionally some of its families (problems are the same as in the whole suite: a family's
problems depend only on the seed and the family's name). Each item is one `ikbench run`.
"""

import datetime
import hashlib
import json
import math
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from . import figures
from .results import ResultsError
from .safe_io import atomic_write_text, check_output_path, output_directory

EXIT_OK, EXIT_FINDING, EXIT_BAD_INPUT = 0, 1, 2


class TuneError(ResultsError):
    """Bad input to `tune` (exit 2, one line on stderr)."""


# ---------------------------------------------------------------- figures of a set

# name -> (direction, unit, meaning). Every one is computed by `set_figures` from the figures of
# ikbench.figures over the set's solves.
SET_FIGURES = {
    "success": ("max", "", "success rate over all solves of the set (converged and within limits)"),
    "success_low": ("max", "", "lower end of that success rate's Wilson 95 % interval"),
    "worst_success": ("max", "", "lowest success rate of the set's families"),
    "mean_time": ("min", "us", "mean solve time over the set's supported solves"),
    "median_time": ("min", "us", "median solve time over the set's supported solves"),
    "p90_time": ("min", "us", "90th percentile of the solve times"),
    "p99_time": ("min", "us", "99th percentile of the solve times"),
    "worst_mean_time": ("min", "us", "highest mean time of the set's families"),
    "geomean_time": ("min", "us", "geometric mean of the families' mean times (each family weighs the same)"),
    "median_iters": ("min", "", "median iterations per solve (all attempts)"),
    "mean_evals": ("min", "", "mean FK + Jacobian evaluations per solve (a cost that does not depend on the "
                              "machine or its load)"),
    "time_ratio": ("min", "", "mean time over the reference's mean time on the same set, same run "
                              "(needs --reference)"),
    "worst_time_ratio": ("min", "", "highest family ratio of mean times to the reference's (needs --reference)"),
}
REFERENCE_FIGURES = ("time_ratio", "worst_time_ratio")


def set_figures(solves, reference=None, *, intervals=True):
    """Figures per solver spec over the solves of one set (one or more runs concatenated; family
    names unique in the set). Returns (pooled, per_family): `pooled` is indexed by solver with
    the SET_FIGURES columns plus the pooled intervals (success_ci_low/high, time_us_mean_ci_low/
    high, time_us_median_ci_low/high, iterations_median_ci_low/high) and `available`;
    `per_family` is figures.summarize(keys=(family, solver)) with `time_ratio` (family mean over
    the reference's family mean) and its conservative interval (the two means' intervals
    divided: low / high, high / low) when a reference is given."""
    pooled = figures.summarize(solves, keys=("solver",), intervals=intervals).set_index("solver")
    fam = figures.summarize(solves, keys=("family", "solver"), intervals=intervals)
    out = pd.DataFrame(index=pooled.index)
    out["available"] = pooled["available"]
    out["solves"] = pooled["solves"]
    out["successes"] = pooled["successes"]
    out["success"] = pooled["success_rate"]
    out["success_low"] = pooled["success_ci_low"]
    out["mean_time"] = pooled["time_us_mean"]
    out["median_time"] = pooled["time_us_median"]
    out["p90_time"] = pooled["time_us_p90"]
    out["p99_time"] = pooled["time_us_p99"]
    out["median_iters"] = pooled["iterations_median"]
    out["mean_evals"] = pooled["fk_evals_mean"] + pooled["jacobian_evals_mean"]
    avail = fam[fam["available"]]
    g = avail.groupby("solver", sort=False)
    out["worst_success"] = g["success_rate"].min().reindex(out.index)
    out["worst_mean_time"] = g["time_us_mean"].max().reindex(out.index)
    with np.errstate(divide="ignore", invalid="ignore"):
        out["geomean_time"] = np.exp(g["time_us_mean"].apply(lambda x: np.log(x).mean())).reindex(out.index)
    for c in ("success_ci_low", "success_ci_high", "time_us_mean_ci_low", "time_us_mean_ci_high",
              "time_us_median_ci_low", "time_us_median_ci_high", "iterations_median_ci_low",
              "iterations_median_ci_high"):
        out[c] = pooled[c]
    if reference is not None and reference in out.index:
        ref = out.loc[reference]
        with np.errstate(divide="ignore", invalid="ignore"):
            out["time_ratio"] = out["mean_time"] / ref["mean_time"]
            out["time_ratio_ci_low"] = out["time_us_mean_ci_low"] / ref["time_us_mean_ci_high"]
            out["time_ratio_ci_high"] = out["time_us_mean_ci_high"] / ref["time_us_mean_ci_low"]
            rf = fam[fam["solver"] == reference].set_index("family")
            fam = fam.copy()
            fam["time_ratio"] = fam["time_us_mean"].to_numpy() / rf["time_us_mean"].reindex(fam["family"]).to_numpy()
            fam["time_ratio_ci_low"] = (fam["time_us_mean_ci_low"].to_numpy() /
                                        rf["time_us_mean_ci_high"].reindex(fam["family"]).to_numpy())
            fam["time_ratio_ci_high"] = (fam["time_us_mean_ci_high"].to_numpy() /
                                         rf["time_us_mean_ci_low"].reindex(fam["family"]).to_numpy())
        worst = fam[fam["available"]].groupby("solver", sort=False)["time_ratio"].max()
        out["worst_time_ratio"] = worst.reindex(out.index)
    else:
        for c in ("time_ratio", "time_ratio_ci_low", "time_ratio_ci_high", "worst_time_ratio"):
            out[c] = np.nan
    return out, fam


# ---------------------------------------------------------------- the criterion

_UNUM = r"(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_NUM = r"[-+]?" + _UNUM
_CONSTRAINT = re.compile(r"^(.+?)\s*(>=|<=|>|<)\s*(" + _NUM + r")$")
_TERM = re.compile(r"\s*([-+]?)\s*(?:(" + _UNUM + r")\s*\*\s*)?([a-z_0-9]+)\s*")

DEFAULT_CRITERION = "success,mean_time"


@dataclass
class Clause:
    kind: str                  # "objective" or "constraint"
    terms: list                # [(coefficient, figure)]
    direction: str = "max"     # objective: "max" or "min"
    op: str = ""               # constraint: >=, <=, >, <
    bound: float = math.nan
    text: str = ""

    def value(self, row):
        v = 0.0
        for c, f in self.terms:
            x = row[f]
            if x is None or not np.isfinite(x):
                return math.nan
            v += c * float(x)
        return v

    def holds(self, row):
        v = self.value(row)
        if not np.isfinite(v):
            return False
        return {">=": v >= self.bound, "<=": v <= self.bound, ">": v > self.bound, "<": v < self.bound}[self.op]

    def figures(self):
        return [f for _, f in self.terms]


@dataclass
class Criterion:
    text: str
    clauses: list = field(default_factory=list)

    @property
    def objectives(self):
        return [c for c in self.clauses if c.kind == "objective"]

    @property
    def constraints(self):
        return [c for c in self.clauses if c.kind == "constraint"]

    def figures(self):
        return sorted({f for c in self.clauses for f in c.figures()})

    def describe(self):
        parts = []
        for c in self.constraints:
            parts.append(f"keep the points with {c.text}")
        objs = [f"{'highest' if c.direction == 'max' else 'lowest'} {c.text.split(':', 1)[-1]}"
                for c in self.objectives]
        if objs:
            parts.append(("then " if parts else "") + ", then ".join(objs))
        return "; ".join(parts) + "; ties: the first point of the grid"


def _parse_expr(text, where):
    text = text.strip()
    if not text:
        raise TuneError(f"{where}: empty expression")
    pos, terms = 0, []
    while pos < len(text):
        m = _TERM.match(text, pos)
        if not m or m.end() == pos or (terms and not m.group(1)):
            raise TuneError(f"{where}: cannot read '{text[pos:]}' (expected [NUMBER*]FIGURE terms joined by + or -, "
                            f"figures: {', '.join(SET_FIGURES)})")
        sign = -1.0 if m.group(1) == "-" else 1.0
        coef = float(m.group(2)) if m.group(2) else 1.0
        name = m.group(3)
        if name not in SET_FIGURES:
            raise TuneError(f"{where}: unknown figure '{name}' (known: {', '.join(SET_FIGURES)})")
        terms.append((sign * coef, name))
        pos = m.end()
    return terms


def parse_criterion(text):
    """Parses the criterion syntax (docs/tuning.md):

        criterion := clause (',' clause)*
        clause    := FIGURE                     objective, in the figure's own direction
                   | 'max:' EXPR | 'min:' EXPR  objective: a weighted score
                   | EXPR OP NUMBER             constraint, OP one of >= <= > <
        EXPR      := [NUMBER '*'] FIGURE (('+' | '-') [NUMBER '*'] FIGURE)*

    Constraints keep the points that meet them; objectives rank the points kept, the first
    objective first, ties broken by the next and finally by the order of the grid. Without any
    objective the default objectives `success,mean_time` apply."""
    if text is None or not str(text).strip():
        raise TuneError("--criterion: empty (e.g. 'success,mean_time' or 'success>=0.999,mean_time')")
    crit = Criterion(text=str(text).strip())
    for k, raw in enumerate(crit.text.split(",")):
        item = raw.strip()
        where = f"--criterion '{crit.text}': clause {k + 1} '{item}'"
        if not item:
            raise TuneError(f"{where}: empty clause")
        m = _CONSTRAINT.match(item)
        if m:
            terms = _parse_expr(m.group(1), where)
            crit.clauses.append(Clause("constraint", terms, op=m.group(2), bound=float(m.group(3)), text=item))
            continue
        if re.match(r"^(max|min)\s*:", item):
            direction, expr = item.split(":", 1)
            terms = _parse_expr(expr, where)
            crit.clauses.append(Clause("objective", terms, direction=direction.strip(), text=item))
            continue
        if item in SET_FIGURES:
            crit.clauses.append(Clause("objective", [(1.0, item)], direction=SET_FIGURES[item][0], text=item))
            continue
        if any(op in item for op in "<>="):
            raise TuneError(f"{where}: a constraint is EXPR OP NUMBER with OP one of >= <= > < (e.g. success>=0.999)")
        raise TuneError(f"{where}: unknown figure '{item}' (known: {', '.join(SET_FIGURES)}; or max:EXPR, "
                        "min:EXPR, EXPR>=NUMBER)")
    if not crit.objectives:
        for name in DEFAULT_CRITERION.split(","):
            crit.clauses.append(Clause("objective", [(1.0, name)], direction=SET_FIGURES[name][0], text=name))
    return crit


def choose(points, criterion, order=None):
    """Ranks the points (rows of a set_figures frame, indexed by spec) by the criterion.

    Returns (ranking, excluded): `ranking` lists the specs that meet every constraint, best
    first (objectives in order; a figure that is not a number ranks last; ties keep `order`, the
    grid's order, default the frame's); `excluded` maps every other spec to why (n/a: no
    supported solve; or the first constraint it fails, with its value)."""
    order = list(points.index) if order is None else list(order)
    excluded, kept = {}, []
    for spec in order:
        row = points.loc[spec]
        if not bool(row.get("available", True)):
            excluded[spec] = "n/a: no supported solve on the tuning set"
            continue
        why = None
        for c in criterion.constraints:
            if not c.holds(row):
                v = c.value(row)
                why = f"fails {c.text} (value {_fmt_value(v)})"
                break
        if why:
            excluded[spec] = why
        else:
            kept.append(spec)

    def key(spec):
        row = points.loc[spec]
        k = []
        for c in criterion.objectives:
            v = c.value(row)
            if not np.isfinite(v):
                k += [1, 0.0]
            else:
                k += [0, -v if c.direction == "max" else v]
        return k

    ranking = sorted(kept, key=key)  # stable: ties keep the grid order
    return ranking, excluded


def _fmt_value(v):
    if v is None or not np.isfinite(v):
        return "n/a"
    return f"{v:.6g}"


# ---------------------------------------------------------------- sets

@dataclass
class Item:
    text: str
    suite_file: Path
    suite_name: str
    seed: int
    seed_given: bool
    families: list            # selected family names (all when none were selected)
    selected: bool            # families were selected
    family_defs: dict         # name -> family JSON object of the suite file


def data_directory():
    """The shipped data directory as `ikbench` finds it: $IKBENCH_DATA_DIR, else this source
    tree's scenarios/data."""
    env = os.environ.get("IKBENCH_DATA_DIR")
    if env:
        return Path(env)
    return Path(__file__).resolve().parent.parent.parent / "scenarios" / "data"


def _suite_path(name):
    p = Path(name)
    if p.suffix == ".json" or "/" in name or p.exists():
        if not p.is_file():
            raise TuneError(f"suite file '{name}' not found")
        return p.resolve()
    cand = data_directory() / "suites" / f"{name}.json"
    if cand.is_file():
        return cand.resolve()
    shipped = sorted(x.stem for x in (data_directory() / "suites").glob("*.json"))
    raise TuneError(f"unknown suite '{name}' (shipped suites in {data_directory() / 'suites'}: "
                    f"{', '.join(shipped) or 'none'}; or give a path to a .json file)")


def parse_item(text, what):
    raw = text.strip()
    if not raw:
        raise TuneError(f"{what}: empty item (expected SUITE[@SEED][:FAMILY,...])")
    head, fams = raw, None
    # SUITE[:FAMILIES]: the last ':' that is not part of a path
    if ":" in raw:
        i = raw.rindex(":")
        if "/" not in raw[i + 1:]:
            head, fams = raw[:i], raw[i + 1:]
    seed, seed_given = None, False
    if "@" in head:
        head, s = head.rsplit("@", 1)
        if not re.fullmatch(r"\d+", s.strip()) or int(s) >= 2 ** 64:
            raise TuneError(f"{what}: '{raw}': seed '{s}' is not a decimal integer in [0, 2^64 - 1]")
        seed, seed_given = int(s), True
    path = _suite_path(head.strip())
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise TuneError(f"{what}: '{raw}': cannot read suite file {path}: {e}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("families"), list):
        raise TuneError(f"{what}: '{raw}': {path} is not a suite file (no 'families' list)")
    defs = {}
    for f in doc["families"]:
        if isinstance(f, dict) and isinstance(f.get("name"), str):
            defs[f["name"]] = f
    if seed is None:
        s = doc.get("seed", 0)
        if not isinstance(s, int) or isinstance(s, bool):
            raise TuneError(f"{what}: '{raw}': {path}: 'seed' is not an integer")
        seed = s
    selected = fams is not None
    if selected:
        names = [x.strip() for x in fams.split(",")]
        if any(not n for n in names):
            raise TuneError(f"{what}: '{raw}': empty family name in the list")
        for n in names:
            if n not in defs:
                raise TuneError(f"{what}: '{raw}': suite {path} has no family '{n}' (its families: "
                                f"{', '.join(defs)})")
        if len(set(names)) != len(names):
            raise TuneError(f"{what}: '{raw}': a family is listed twice")
    else:
        names = list(defs)
    name = doc.get("name") if isinstance(doc.get("name"), str) else path.stem
    return Item(raw, path, name, seed, seed_given, names, selected, defs)


def parse_set(text, what):
    """A set: ITEM ('+' ITEM)*, ITEM = SUITE[@SEED][:FAMILY,...]. Family names must be unique
    within the set (its solves are pooled by family)."""
    if text is None or not text.strip():
        raise TuneError(f"{what}: empty (expected SUITE[@SEED][:FAMILY,...] joined by '+')")
    items = [parse_item(t, what) for t in text.split("+")]
    seen = {}
    for it in items:
        for f in it.families:
            if f in seen:
                raise TuneError(f"{what}: family '{f}' is in '{seen[f]}' and in '{it.text}': family names must be "
                                "unique within a set")
            seen[f] = it.text
    return items


def family_keys(items):
    """{(family name, seed)}: a family's problems depend only on these two (and its definition)."""
    return {(f, it.seed) for it in items for f in it.families}


def _resolve_file(value, suite_dir):
    p = Path(value)
    if p.is_absolute():
        return str(p)
    for base in (suite_dir, data_directory()):
        if (base / p).exists():
            return str((base / p).resolve())
    return value


def item_suite_file(item, directory):
    """The suite file `ikbench run` reads for an item: the file itself when every family is run,
    else a copy with the selected families only (same name and seed, so the same problems; data
    files made absolute so that they resolve from the copy's directory)."""
    if not item.selected:
        return item.suite_file
    doc = json.loads(item.suite_file.read_text(encoding="utf-8"))
    fams = []
    for f in doc["families"]:
        if isinstance(f, dict) and f.get("name") in item.families:
            f = dict(f)
            if isinstance(f.get("file"), str):
                f["file"] = _resolve_file(f["file"], item.suite_file.parent)
            fams.append(f)
    doc["families"] = fams
    doc.pop("solvers", None)
    output_directory(directory, inputs=[item.suite_file])
    out = directory / f"{_safe(item.suite_name)}-{_digest(json.dumps(item.families))[:8]}.json"
    return atomic_write_text(out, json.dumps(doc, indent=1) + "\n", inputs=[item.suite_file])


def _safe(name):
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name) or "suite"


def _digest(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# ---------------------------------------------------------------- running ikbench

def find_ikbench(given=None):
    """The harness: --ikbench, else $IKBENCH_BIN (set by `ikbench tune`), else $IKBENCH_CLI, else
    this source tree's build/release/benchmarks/ikbench, else `ikbench` on PATH."""
    root = Path(__file__).resolve().parent.parent.parent
    for c in (given, os.environ.get("IKBENCH_BIN"), os.environ.get("IKBENCH_CLI"),
              str(root / "build" / "release" / "benchmarks" / "ikbench"), shutil.which("ikbench")):
        if c and Path(c).is_file() and os.access(c, os.X_OK):
            return str(Path(c).resolve())
        if c and c == given:
            raise TuneError(f"--ikbench '{given}': not an executable file")
    raise TuneError("the ikbench harness was not found: pass --ikbench PATH (or run `ikbench tune`)")


def load_average():
    try:
        return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]
    except (OSError, ValueError):
        return None


def sched_prefix(sched):
    """The command prefix of a scheduling policy: [] (normal) or chrt -f 1 (SCHED_FIFO: the run is not
    preempted by the machine's other processes, so a wall-clock budget means the solver's time)."""
    if sched in (None, "normal"):
        return []
    if sched == "fifo":
        chrt = shutil.which("chrt")
        if not chrt:
            raise TuneError("--sched fifo needs chrt (util-linux)")
        return [chrt, "-f", "1"]
    raise TuneError(f"--sched: expected normal or fifo, got '{sched}'")


def run_ikbench(exe, suite_file, seed, solvers, out_dir, threads, log_path, force, sched=None):
    args = sched_prefix(sched) + [exe, "run", "--suite", str(suite_file), "--solvers", solvers, "--threads", str(threads),
            "--out", str(out_dir), "--no-trace", "--progress", "none", "--no-summary"]
    if seed is not None:
        args += ["--seed", str(seed)]
    if force:
        args.append("--force")
    env = dict(os.environ)
    env.setdefault("PYTHONPATH", str(Path(__file__).resolve().parent.parent))
    check_output_path(log_path, inputs=[suite_file])  # refused before the run, not after
    before = load_average()
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    after = load_average()
    text = "$ " + " ".join(_quote(a) for a in args) + "\n" + p.stdout.decode("utf-8", errors="replace")
    atomic_write_text(log_path, text, inputs=[suite_file])
    if p.returncode != 0:
        tail = text.strip().splitlines()[-3:]
        raise TuneError(f"`ikbench run` failed (exit {p.returncode}) on {suite_file}: " + " | ".join(tail) +
                        f" (log: {log_path})")
    return args, before, after


def _quote(a):
    return a if re.fullmatch(r"[A-Za-z0-9_./=:,@+-]+", a) else "'" + a.replace("'", "'\\''") + "'"


def run_set(exe, items, solvers, directory, threads, force, log, sched=None):
    """Runs each item of a set; returns [(item, run_dir, record)] and the concatenated solves."""
    runs, frames = [], []
    for k, it in enumerate(items):
        suite_file = item_suite_file(it, directory / "suites")
        out = directory / f"{k}-{_safe(it.suite_name)}"
        log(f"ikbench tune: running {it.text} ({len(it.families)} families) -> {out}")
        args, before, after = run_ikbench(exe, suite_file, it.seed if it.seed_given else None, solvers, out, threads,
                                          directory / "logs" / f"{k}-{_safe(it.suite_name)}.log", force, sched)
        from .results import load

        run = load(out)
        runs.append({"item": it.text, "suite": it.suite_name, "suite_file": str(suite_file), "seed": it.seed,
                     "families": it.families, "results": str(out), "command": " ".join(_quote(a) for a in args),
                     "load_average_before": before, "load_average_after": after,
                     "solves": int(len(run.solves)), "_run": run})
        frames.append(run.solves)
    solves = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    return runs, solves


# ---------------------------------------------------------------- overlap

def _canonical(x):
    return json.dumps(x, sort_keys=True, separators=(",", ":"))


def model_fingerprint(model):
    return _digest(_canonical(model.get("joints")))


def problem_fingerprints(run):
    """{fingerprint: (family, problem)} of a run's problems: the model's joints, q0 and goals."""
    if run.problems is None or run.models is None:
        return {}
    mfp = {mid: model_fingerprint(m) for mid, m in run.models.items()}
    out = {}
    for r in run.problems.itertuples(index=False):
        out[_digest(_canonical([mfp.get(r.model), r.q0, r.goals]))] = (r.family, int(r.problem))
    return out


def model_names(run):
    """{fingerprint: (model name, source)} of a run's models."""
    if run.models is None:
        return {}
    return {model_fingerprint(m): (m.get("name"), m.get("source")) for m in run.models.values()}


# ---------------------------------------------------------------- the command

def _points_order(run, reference):
    return [s for s in run.solver_specs if s != reference]


def _json_num(v):
    if v is None:
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return v
    return f if math.isfinite(f) else None


FIGURE_COLUMNS = ["solves", "successes", "success", "success_ci_low", "success_ci_high", "worst_success",
                  "mean_time", "time_us_mean_ci_low", "time_us_mean_ci_high", "median_time",
                  "time_us_median_ci_low", "time_us_median_ci_high", "p90_time", "p99_time", "worst_mean_time",
                  "geomean_time", "median_iters", "iterations_median_ci_low", "iterations_median_ci_high",
                  "mean_evals", "time_ratio", "time_ratio_ci_low", "time_ratio_ci_high", "worst_time_ratio"]

FAMILY_COLUMNS = ["family", "solver", "dof", "solves", "successes", "success_rate", "success_ci_low",
                  "success_ci_high", "time_us_mean", "time_us_mean_ci_low", "time_us_mean_ci_high",
                  "time_us_median", "time_us_median_ci_low", "time_us_median_ci_high", "iterations_median",
                  "iterations_median_ci_low", "iterations_median_ci_high", "time_ratio", "time_ratio_ci_low",
                  "time_ratio_ci_high"]


def _row_json(row, cols):
    return {c: (_json_num(row[c]) if c not in ("family", "solver") else row[c]) for c in cols if c in row}


def _families_json(fam):
    cols = [c for c in FAMILY_COLUMNS if c in fam.columns]
    return [_row_json(r, cols) for _, r in fam.iterrows()]


def tune(args, log=None):
    """Runs the whole command; returns (exit status, report dict)."""
    log = log or (lambda m: print(m, file=sys.stderr))
    crit = parse_criterion(args.criterion)
    if args.reference is None and any(f in REFERENCE_FIGURES for f in crit.figures()):
        raise TuneError(f"--criterion '{crit.text}' uses a ratio to the reference: give --reference SPEC")
    if args.threads < 0:
        raise TuneError(f"--threads must be >= 0 (0 = all cores), got {args.threads}")
    if args.runner_ups < 0:
        raise TuneError(f"--runner-ups must be >= 0, got {args.runner_ups}")
    if not args.solvers or not args.solvers.strip():
        raise TuneError("--solvers: empty (expected a spec list or grid, e.g. dls:lambda={0.01,0.5})")
    tune_items = parse_set(args.tune_on, "--tune-on")
    eval_items = parse_set(args.evaluate_on, "--evaluate-on")
    shared = sorted(family_keys(tune_items) & family_keys(eval_items))
    notes = []
    if shared:
        text = ", ".join(f"{f} (seed {s})" for f, s in shared)
        if not args.allow_overlap:
            raise TuneError(f"the tuning and evaluation sets share families with the same name and seed, hence the "
                            f"same problems: {text}. Evaluate on other families or another seed (SUITE@SEED), or "
                            "pass --allow-overlap to run anyway (the report then flags it)")
        notes.append(f"OVERLAP: the sets share families with the same name and seed: {text}")
    exe = find_ikbench(args.ikbench)
    out = Path(args.out) if args.out else Path("results") / (
        datetime.datetime.now().strftime("%Y%m%d-%H%M%S") + "-tune")
    check_output_path(out, kind="dir", inputs=[it.suite_file for it in tune_items + eval_items])
    if out.exists() and any(out.iterdir()) and not args.force:
        raise TuneError(f"output directory '{out}' is not empty (pass --force to replace its runs)")
    output_directory(out, inputs=[it.suite_file for it in tune_items + eval_items])
    started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    reference = args.reference.strip() if args.reference else None
    grid_text = args.solvers.strip()

    # 1. every point on the tuning set
    solvers = grid_text + ("," + reference if reference else "")
    tune_runs, tune_solves = run_set(exe, tune_items, solvers, out / "tune", args.threads, args.force, log,
                                      args.sched)
    order = _points_order(tune_runs[0]["_run"], reference)
    if reference and reference not in set(tune_solves["solver"]):
        raise TuneError(f"--reference '{reference}' is not among the run's solver specs")
    if not order:
        raise TuneError("the grid has no point besides the reference")
    pts, tune_fam = set_figures(tune_solves, reference)
    points = pts.loc[order]
    ranking, excluded = choose(points, crit, order)
    chosen = ranking[0] if ranking else None

    report = {
        "format": "ikbench-tune/1",
        "command": args.command_line,
        "criterion": {"text": crit.text, "meaning": crit.describe(),
                      "clauses": [{"kind": c.kind, "text": c.text, "direction": c.direction if c.kind == "objective"
                                   else None, "op": c.op or None, "bound": _json_num(c.bound),
                                   "terms": [[co, f] for co, f in c.terms]} for c in crit.clauses]},
        "grid": grid_text, "points": order, "reference": reference, "threads": args.threads, "sched": args.sched,
        "start_time": started, "ikbench": exe,
        "tuning_set": {"text": args.tune_on, "runs": [{k: v for k, v in r.items() if k != "_run"} for r in tune_runs]},
        "evaluation_set": {"text": args.evaluate_on, "runs": []},
        "ranking": ranking, "excluded": excluded, "chosen": chosen,
        "tuning": {"points": {s: _row_json(points.loc[s], FIGURE_COLUMNS) for s in order},
                   "reference": _row_json(pts.loc[reference], FIGURE_COLUMNS) if reference else None,
                   "families": _families_json(tune_fam)},
        "evaluation": None, "notes": notes, "out": str(out), "runner_ups": args.runner_ups,
    }
    if chosen is None:
        report["notes"].append("no point of the grid meets the criterion's constraints on the tuning set: nothing "
                               "was evaluated")
        _write(out, report)
        log(f"ikbench tune: no point meets the constraints of '{crit.text}' on the tuning set (see {out / 'tune.md'})")
        return EXIT_FINDING, report

    # 2. the chosen point (and the reference) on the evaluation set
    eval_solvers = chosen + ("," + reference if reference else "")
    eval_runs, eval_solves = run_set(exe, eval_items, eval_solvers, out / "evaluate", args.threads, args.force,
                                      log, args.sched)
    ran = set(eval_solves["solver"])
    expected = {chosen} | ({reference} if reference else set())
    if ran != expected:
        raise TuneError(f"the evaluation runs ran {sorted(ran)}, expected {sorted(expected)}")
    ev, eval_fam = set_figures(eval_solves, reference)
    report["evaluation_set"]["runs"] = [{k: v for k, v in r.items() if k != "_run"} for r in eval_runs]
    report["evaluation"] = {"point": _row_json(ev.loc[chosen], FIGURE_COLUMNS),
                            "reference": _row_json(ev.loc[reference], FIGURE_COLUMNS) if reference else None,
                            "families": _families_json(eval_fam)}

    # 3. overlap of what was actually run
    status = EXIT_OK
    tp, ep = {}, {}
    for r in tune_runs:
        tp.update(problem_fingerprints(r["_run"]))
    for r in eval_runs:
        ep.update(problem_fingerprints(r["_run"]))
    common = set(tp) & set(ep)
    if common:
        ex = sorted(ep[k] for k in common)[:3]
        notes.append(f"OVERLAP: {len(common)} of the {len(ep)} evaluation problems are also in the tuning set "
                     f"(e.g. {', '.join(f'{f}/{p}' for f, p in ex)}): their figures are not an evaluation on unseen "
                     "problems")
        if not args.allow_overlap:
            status = EXIT_FINDING
    tm, em = {}, {}
    for r in tune_runs:
        tm.update(model_names(r["_run"]))
    for r in eval_runs:
        em.update(model_names(r["_run"]))
    same_models = sorted({em[k][0] or "?" for k in set(tm) & set(em)})
    if same_models:
        notes.append("same model in both sets (other targets): " + ", ".join(same_models) +
                     "; the evaluation on those models is on unseen targets of a model the point was tuned on")
    report["end_time"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    _write(out, report)
    return status, report


# ---------------------------------------------------------------- the report

def _pct(v, lo=None, hi=None, digits=2):
    if v is None or not np.isfinite(v):
        return "n/a"
    s = f"{100 * v:.{digits}f}%"
    if lo is not None and hi is not None and np.isfinite(lo) and np.isfinite(hi):
        s += f" [{100 * lo:.{digits}f}, {100 * hi:.{digits}f}]"
    return s


def _num(v, lo=None, hi=None, fmt="{:.1f}"):
    if v is None or not np.isfinite(v):
        return "n/a"
    s = fmt.format(v)
    if lo is not None and hi is not None and np.isfinite(lo) and np.isfinite(hi):
        s += " [" + fmt.format(lo) + ", " + fmt.format(hi) + "]"
    return s


def _g(d, k):
    v = d.get(k) if d else None
    return np.nan if v is None else v


def _figure_rows(t, e, reference):
    rows = [("success", _pct(_g(t, "success"), _g(t, "success_ci_low"), _g(t, "success_ci_high")),
             _pct(_g(e, "success"), _g(e, "success_ci_low"), _g(e, "success_ci_high"))),
            ("worst family success", _pct(_g(t, "worst_success")), _pct(_g(e, "worst_success"))),
            ("mean time [us]", _num(_g(t, "mean_time"), _g(t, "time_us_mean_ci_low"), _g(t, "time_us_mean_ci_high")),
             _num(_g(e, "mean_time"), _g(e, "time_us_mean_ci_low"), _g(e, "time_us_mean_ci_high"))),
            ("median time [us]", _num(_g(t, "median_time"), _g(t, "time_us_median_ci_low"),
                                      _g(t, "time_us_median_ci_high")),
             _num(_g(e, "median_time"), _g(e, "time_us_median_ci_low"), _g(e, "time_us_median_ci_high"))),
            ("p99 time [us]", _num(_g(t, "p99_time")), _num(_g(e, "p99_time"))),
            ("median iterations", _num(_g(t, "median_iters"), _g(t, "iterations_median_ci_low"),
                                       _g(t, "iterations_median_ci_high"), "{:.0f}"),
             _num(_g(e, "median_iters"), _g(e, "iterations_median_ci_low"), _g(e, "iterations_median_ci_high"),
                  "{:.0f}")),
            ("mean FK + Jacobian evaluations", _num(_g(t, "mean_evals")), _num(_g(e, "mean_evals"))),
            ("geometric mean of family mean times [us]", _num(_g(t, "geomean_time")), _num(_g(e, "geomean_time")))]
    if reference:
        rows += [(f"mean time / `{reference}`'s", _num(_g(t, "time_ratio"), _g(t, "time_ratio_ci_low"),
                                                       _g(t, "time_ratio_ci_high"), "{:.3f}"),
                  _num(_g(e, "time_ratio"), _g(e, "time_ratio_ci_low"), _g(e, "time_ratio_ci_high"), "{:.3f}")),
                 ("worst family ratio", _num(_g(t, "worst_time_ratio"), fmt="{:.3f}"),
                  _num(_g(e, "worst_time_ratio"), fmt="{:.3f}"))]
    return rows


def _family_table(fams, reference, solver):
    head = "| family | DOF | solves | success [95% CI] | mean time [us] | median time [us] | median it. |"
    sep = "|---|---:|---:|---|---|---|---:|"
    if reference:
        head += " ratio to the reference's mean |"
        sep += "---|"
    lines = [head, sep]
    for f in fams:
        if f["solver"] != solver:
            continue
        line = (f"| {f['family']} | {_num(_g(f, 'dof'), fmt='{:.0f}')} | {_num(_g(f, 'solves'), fmt='{:.0f}')} | "
                f"{_pct(_g(f, 'success_rate'), _g(f, 'success_ci_low'), _g(f, 'success_ci_high'))} | "
                f"{_num(_g(f, 'time_us_mean'), _g(f, 'time_us_mean_ci_low'), _g(f, 'time_us_mean_ci_high'))} | "
                f"{_num(_g(f, 'time_us_median'), _g(f, 'time_us_median_ci_low'), _g(f, 'time_us_median_ci_high'))} | "
                f"{_num(_g(f, 'iterations_median'), fmt='{:.0f}')} |")
        if reference:
            line += f" {_num(_g(f, 'time_ratio'), _g(f, 'time_ratio_ci_low'), _g(f, 'time_ratio_ci_high'), '{:.3f}')} |"
        lines.append(line)
    return lines


def markdown(report, runner_ups=5):
    r = report
    ref = r.get("reference")
    L = ["# ikbench tune", "", f"`{r['command']}`" if r.get("command") else "", "",
         f"* grid: `{r['grid']}` ({len(r['points'])} points)" + (f"; reference `{ref}`" if ref else ""),
         f"* criterion: `{r['criterion']['text']}`: {r['criterion']['meaning']}",
         f"* tuning set: `{r['tuning_set']['text']}`; evaluation set: `{r['evaluation_set']['text']}`",
         f"* threads: {r['threads']}; scheduling: {r.get('sched', 'normal')}; started {r['start_time']}"]
    for side in ("tuning_set", "evaluation_set"):
        for run in r[side]["runs"]:
            la = run.get("load_average_before"), run.get("load_average_after")
            L.append(f"* {side.replace('_', ' ')} run `{run['results']}` ({', '.join(run['families'])}; seed "
                     f"{run['seed']}): load average {la[0]} before, {la[1]} after")
    L.append("")
    for n in r["notes"]:
        L += [f"**{n}**", ""]
    chosen = r["chosen"]
    if chosen is None:
        L += ["No point meets the criterion's constraints on the tuning set; nothing was evaluated.", ""]
    else:
        t = r["tuning"]["points"][chosen]
        e = r["evaluation"]["point"]
        L += [f"## Chosen point: `{chosen}`", "",
              "| figure | on the tuning set (the data it was chosen on) | on the evaluation set (unseen) |",
              "|---|---|---|"]
        for name, a, b in _figure_rows(t, e, ref):
            L.append(f"| {name} | {a} | {b} |")
        L += ["", "Success: converged and within limits over all solves [Wilson 95 % interval]; times over "
              "supported solves [percentile bootstrap 95 % intervals]; ratios [the two means' intervals "
              "divided: a conservative interval]. Definitions: docs/analysis.md, docs/tuning.md.", ""]
        L += ["### Per family, on the evaluation set", ""] + _family_table(r["evaluation"]["families"], ref, chosen)
        if ref:
            L += ["", f"Reference `{ref}` on the evaluation set:", ""] + \
                 _family_table(r["evaluation"]["families"], None, ref)
        L += ["", "### Per family, on the tuning set (the data it was chosen on)", ""] + \
            _family_table(r["tuning"]["families"], ref, chosen)
    extra = [f for f in r["criterion_figures"] if f not in ("success", "mean_time")]
    L += ["", "## Ranking on the tuning set", "",
          "| " + " | ".join(["rank", "point", "success [95% CI]", "mean time [us]"] + extra +
                            ["intervals overlapping the chosen's"]) + " |",
          "|---:|---|---|---|" + "---|" * len(extra) + "---|"]
    shown = r["ranking"][:1 + runner_ups]
    c = r["tuning"]["points"][chosen] if chosen else None
    for k, s in enumerate(shown):
        p = r["tuning"]["points"][s]
        cells = [str(k + 1), f"`{s}`" + (" (chosen)" if s == chosen else ""),
                 _pct(_g(p, "success"), _g(p, "success_ci_low"), _g(p, "success_ci_high")),
                 _num(_g(p, "mean_time"), _g(p, "time_us_mean_ci_low"), _g(p, "time_us_mean_ci_high"))]
        cells += [_fmt_value(_criterion_value(p, f)) for f in extra]
        cells.append("" if s == chosen else ", ".join(overlapping(p, c)) or "none")
        L.append("| " + " | ".join(cells) + " |")
    if len(r["ranking"]) > len(shown):
        L.append(f"| | ... {len(r['ranking']) - len(shown)} more (tune.json) | | |" + " |" * (len(extra) + 1))
    L += ["", "A runner-up whose success and mean-time intervals both overlap the chosen point's is not separated "
          "from it by this tuning set: a repeat with other seeds may rank them the other way round."]
    if r["excluded"]:
        L += ["", "Excluded by the criterion:", ""]
        for s, why in list(r["excluded"].items())[:20]:
            L.append(f"* `{s}`: {why}")
        if len(r["excluded"]) > 20:
            L.append(f"* ... {len(r['excluded']) - 20} more (tune.json)")
    L.append("")
    return "\n".join(x for x in L if x is not None) + "\n"


def overlapping(p, c):
    """Which 95 % intervals of point p overlap those of point c: success (Wilson), mean time
    (bootstrap)."""
    out = []
    if c is None:
        return out
    for name, lo, hi in (("success", "success_ci_low", "success_ci_high"),
                         ("mean time", "time_us_mean_ci_low", "time_us_mean_ci_high")):
        a, b, x, y = _g(p, lo), _g(p, hi), _g(c, lo), _g(c, hi)
        if all(np.isfinite(v) for v in (a, b, x, y)) and a <= y and x <= b:
            out.append(name)
    return out


def _criterion_value(p, f):
    v = p.get(f)
    return np.nan if v is None else v


def _write(out, report):
    crit_figs = []
    for c in report["criterion"]["clauses"]:
        for _, f in c["terms"]:
            if f not in crit_figs:
                crit_figs.append(f)
    report["criterion_figures"] = crit_figs
    atomic_write_text(out / "tune.json", json.dumps(report, indent=1, allow_nan=False) + "\n")
    atomic_write_text(out / "tune.md", markdown(report, runner_ups=report.get("runner_ups", 5)))


def add_arguments(p):
    p.add_argument("--solvers", required=True, metavar="GRID",
                   help="the points: a spec list or grid, as `ikbench run --solvers` (e.g. dls:lambda={0.01,0.5})")
    p.add_argument("--tune-on", required=True, metavar="SET",
                   help="tuning set: SUITE[@SEED][:FAMILY,...] joined by '+' (suite name or file)")
    p.add_argument("--evaluate-on", required=True, metavar="SET",
                   help="evaluation set, same syntax; must not share a family (name and seed) with the tuning set")
    p.add_argument("--criterion", default=DEFAULT_CRITERION,
                   help="how the point is chosen (default 'success,mean_time': highest success, then lowest mean "
                        "time); e.g. 'success>=0.999,mean_time', 'max:success-0.001*mean_time' (docs/tuning.md)")
    p.add_argument("--reference", metavar="SPEC", help="a spec run beside the points on both sets (not a point): "
                   "gives the figures time_ratio and worst_time_ratio")
    p.add_argument("--threads", type=int, default=1, help="threads of each `ikbench run` (default 1; 0 = all cores)")
    p.add_argument("--out", help="output directory (default results/<timestamp>-tune)")
    p.add_argument("--runner-ups", type=int, default=5, help="runner-ups listed in tune.md (default 5)")
    p.add_argument("--allow-overlap", action="store_true",
                   help="run even when the sets share families (flagged in the report)")
    p.add_argument("--force", action="store_true", help="replace the runs in a non-empty --out")
    p.add_argument("--sched", choices=("normal", "fifo"), default="normal",
                   help="fifo: run each `ikbench run` under chrt -f 1 (SCHED_FIFO, needs root): on a loaded machine "
                        "the solves are then not preempted past their wall-clock budget")
    p.add_argument("--ikbench", help="the harness binary (default: $IKBENCH_BIN, set by `ikbench tune`)")


def main_from_args(args):
    report_status, report = tune(args)
    sys.stdout.write(markdown(report, runner_ups=args.runner_ups))
    out = Path(report["out"])
    print(f"tune: {out / 'tune.json'}, {out / 'tune.md'}")
    return report_status
