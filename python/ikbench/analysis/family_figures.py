"""Figures of chosen solver specs on chosen families of a run, as data: what `ikbench plot
convergence|time|success RUN --family F --solvers A,B` draws (ikbench.render.family_render draws it).

    sel = select(run, families=["chain7-pose"], solvers=["dls", "kdl-lma"])   # {family: [specs]}
    conv = convergence_data(run, sel, x="iteration")   # median and IQR band over the traced problems
    times = time_data(run, sel)                         # quartiles and Tukey whiskers of solve times
    bars = success_data(run, sel)                       # success with Wilson 95 % intervals

Filters: a family is named exactly; a solver by its spec, or by a backend name, which takes every
spec of that backend in the run. Without --solvers, a family's specs are report.html's default
picks (default_picks: the four best ranked, then the KDL peers). A filter that matches
nothing is a ResultsError (exit status 2) that names what the run has.

Convergence: per spec the traced solves of the family (traces.csv: a seeded sample of problems,
`ikbench run --trace-problems N`), each a step function of its largest goal error (a solve that
stopped keeps its final error), their median and interquartile band over a grid of iterations
(every one) or of times (200, geometric; traces.csv `time_us`), as curves.band computes them. Each
series carries how many problems were traced, how many of those solves succeeded (solves.csv, the
one definition: figures.success_mask), and the first grid point where the median is within the
tolerance. A spec traced on fewer than MIN_TRACED problems of the family (or on fewer than all of
them, when the family has fewer) gets a note with the `ikbench run` command that traces more.
"""

import math
import os
import shlex
from dataclasses import dataclass, field

import numpy as np

from . import curves, figures
from ..io.results import ResultsError
from ..io.specs import named, spec_name, spec_records, split_spec_list  # noqa: F401  (spec_name: for the renderers)

MIN_TRACED = 30          # traced problems of a family below which a band gets a note
X_AXES = ("iteration", "time")
TIME_POINTS = 200        # points of the time grid (as the PNG plots')


@dataclass
class Note:
    """What a reader should know about a figure, and the command that would improve it (or None)."""
    text: str
    command: str = None

    def __str__(self):
        return self.text + (f" {self.command}" if self.command else "")


# ---------------------------------------------------------------- selection

PEERS = ("kdl-lma", "kdl-nr-jl")      # KDL's solvers: the peers drawn by default beside the best
DEFAULT_PICKS = 4                     # best solvers picked by default in the per-family plots


def default_picks(ranked, records=None):
    """{family: [specs]}: the DEFAULT_PICKS best ranked cells of the family, then the KDL peers
    (PEERS) that ran on it with a supported solve. `records`: the run's
    ikbench.io.specs.spec_records, which name each spec's backend."""
    out = {}
    for fam, part in ranked.groupby("family", sort=False):
        best = part[part["rank"].notna()].sort_values("rank")["solver"].tolist()[:DEFAULT_PICKS]
        peers = [s for s in part[part["available"]]["solver"] if spec_name(s, records) in PEERS and s not in best]
        out[fam] = best + peers
    return out


def family_problems(run, family):
    """How many problems the family has (run.json families[].problems, else solves.csv's)."""
    for f in run.families:
        if f.get("name") == family and isinstance(f.get("problems"), int) and not isinstance(f.get("problems"), bool):
            return int(f["problems"])
    s = run.solves
    return int(s.loc[s["family"] == family, "problem"].nunique())


def _split(values, what="--solvers"):
    """A comma-separated option (or a list of them) as a list of names, empty ones dropped: commas
    separate specs, outside quotes and braces (ikbench.io.specs.split_spec_list, docs: "Specs")."""
    out = []
    for v in values or []:
        out += split_spec_list(v, what)
    return out


def resolve_solvers(run, names):
    """The specs of the run that the names stand for, in the order named: a spec as written, or a
    backend name, which stands for every spec of that backend. ResultsError names the specs of
    the run when a name matches none."""
    specs = list(run.solver_specs)
    records = spec_records(run)
    out = []
    for name in names:
        hits = named(specs, name, records)
        if not hits:
            raise ResultsError(f"--solvers: '{name}' matches no solver spec of {run.path} (its specs: "
                               f"{', '.join(specs)})")
        out += [h for h in hits if h not in out]
    return out


class Selection(dict):
    """{family: [specs]} chosen by the filters, and `notes`: chosen specs that did not run on a
    chosen family."""

    def __init__(self, items=(), notes=()):
        super().__init__(items)
        self.notes = list(notes)


def select(run, families=None, solvers=None, ranked=None):
    """The Selection the filters choose, families in the run's order. `families` and `solvers`:
    lists of names (comma-separated lists are split), None for the default (every family;
    default_picks of each). Only specs with a solve on the family are kept (the others are
    named in its notes); ResultsError when a family is unknown or keeps no spec."""
    run_fams = list(dict.fromkeys(run.solves["family"]))
    wanted = _split(families, "--families") if families else run_fams
    unknown = [f for f in wanted if f not in run_fams]
    if unknown:
        raise ResultsError(f"--family: {', '.join(repr(f) for f in unknown)} is not a family of {run.path} "
                           f"(its families: {', '.join(run_fams)})")
    wanted = [f for f in run_fams if f in wanted]
    if solvers:
        chosen = resolve_solvers(run, _split(solvers))
        picks = None
    else:
        chosen = None
        picks = default_picks(ranked if ranked is not None else figures.summarize(run, intervals=False),
                              spec_records(run))
    ran = run.solves.groupby("family", sort=False)["solver"].unique()
    out, empty = Selection(), []
    for fam in wanted:
        present = set(ran[fam])
        specs = [s for s in (chosen if chosen is not None else picks.get(fam, [])) if s in present]
        if specs:
            out[fam] = specs
            absent = [s for s in chosen or [] if s not in present]
            if absent:
                out.notes.append(Note(f"{fam}: {', '.join(absent)} did not run on it (not drawn)"))
        else:
            empty.append(fam)
    if empty and out:
        out.notes.append(Note(f"{', '.join(empty)}: none of the chosen specs ran on it (not drawn)"))
    if not out:
        raise ResultsError(f"no solve of {', '.join(chosen) if chosen else 'any ranked spec'} on "
                           f"{', '.join(empty)} in {run.path} (specs that ran there: "
                           f"{', '.join(dict.fromkeys(s for f in empty for s in ran[f]))})")
    return out


# ---------------------------------------------------------------- the command that traces more

def harness_program(run):
    """How the user ran the harness: the program of run.json's command line when it is `ikbench`
    (e.g. build/release/benchmarks/ikbench), else `ikbench`."""
    argv = _command(run)
    if argv and os.path.basename(argv[0]) == "ikbench":
        return argv[0]
    return "ikbench"


def _command(run):
    text = run.meta.get("command_line") if isinstance(run.meta, dict) else None
    if not isinstance(text, str):
        return []
    try:
        return shlex.split(text)
    except ValueError:
        return []


# options of `ikbench run` that the re-run replaces or drops, with whether each takes a value
_RERUN_DROP = {"--trace-problems": True, "--no-trace": False, "--out": True, "--force": False, "--resume": False,
               "--solvers": True, "--history": True, "--shard": True, "--progress": True, "--no-summary": False}


def rerun_command(run, specs, problems):
    """The `ikbench run` command that runs the same problems as `run` (its run.json command line:
    suite, seed, robot, ...) for `specs` with `problems` traced problems per family, into a new
    directory beside it."""
    argv = _command(run)
    if len(argv) >= 2 and argv[1] == "run":
        keep, i = [harness_program(run), "run"], 2
        while i < len(argv):
            a = argv[i]
            name = a.split("=", 1)[0]
            if name in _RERUN_DROP:
                i += 1 + (1 if _RERUN_DROP[name] and "=" not in a else 0)
                continue
            keep.append(a)
            i += 1
    else:
        keep = ["ikbench", "run", "--suite", str(run.suite)]
        if run.seed is not None:
            keep += ["--seed", str(run.seed)]
    out = f"{run.path.resolve()}-trace{problems}" if str(problems) != "all" else f"{run.path.resolve()}-trace-all"
    keep += ["--solvers", ",".join(specs), "--trace-problems", str(problems), "--out", out]
    return shlex.join(keep)


# ---------------------------------------------------------------- convergence


@dataclass
class CurveSeries:
    """One spec's band of one error kind on one family."""
    family: str
    spec: str
    kind: str                  # "position" [m] or "orientation" [rad]
    x: str                     # "iteration" or "time" [us]
    grid: np.ndarray
    q25: np.ndarray
    q50: np.ndarray
    q75: np.ndarray
    traced: int                # traced problems (solves) the band is over
    problems: list             # their problem indices
    succeeded: int             # of those solves, how many succeeded (solves.csv)
    reached: float = math.nan  # first grid point where the median is within the tolerance (nan: never)
    sparse: bool = False       # only start and end records (KDL's LMA): the band is a step

    @property
    def label(self):
        """The legend text: the spec, how many problems were traced and how many of them converged."""
        return f"{self.spec} (n={self.traced} traced, {self.succeeded}/{self.traced} converged)"


@dataclass
class ConvergenceData:
    x: str
    tolerances: dict           # kind -> tolerance [m or rad]
    families: dict             # family -> {"kinds", "problems" (of the family), "specs"}
    series: list = field(default_factory=list)    # [CurveSeries]
    notes: list = field(default_factory=list)     # [Note]: too few traced problems, specs without traces
    time_column: str = "time_us"

    def of(self, family, spec, kind):
        return next(s for s in self.series if (s.family, s.spec, s.kind) == (family, spec, kind))


def _traced_cells(run):
    """(frame, {(family, spec): [record arrays]}, time column) of the run's traces.csv."""
    table = curves.read_traces(run).check()
    tr = table.frame
    if tr is None or tr.empty:
        return tr, {}, "time_us"
    tcol = curves.time_column(tr)
    return tr, curves.traced_solves(tr, tcol), tcol


def convergence_data(run, selection, x="iteration", min_traced=MIN_TRACED):
    """ConvergenceData of the selection ({family: [specs]}, select()) on the x axis `x`. A family
    whose chosen specs have no traced solve is a ResultsError naming the command that traces it."""
    if x not in X_AXES:
        raise ResultsError(f"--x {x}: expected one of {', '.join(X_AXES)}")
    tr, cells, tcol = _traced_cells(run)
    tol = dict(zip(("position", "orientation"), run.tolerances))
    data = ConvergenceData(x, tol, {}, time_column=tcol)
    solves = run.solves
    ok = figures.success_mask(solves)
    missing = []
    for fam, specs in selection.items():
        fam_seqs = [a for (f, _), seqs in cells.items() if f == fam for a in seqs]
        traced_specs = [s for s in specs if cells.get((fam, s))]
        untraced = [s for s in specs if not cells.get((fam, s))]
        nfam = family_problems(run, fam)
        if not traced_specs:
            missing.append((fam, specs, nfam))
            continue
        kinds = curves.family_error_kinds(fam_seqs)
        data.families[fam] = {"kinds": kinds, "problems": nfam, "specs": traced_specs}
        if untraced:
            data.notes.append(Note(f"{fam}: no traced solve of {', '.join(untraced)} (not drawn)"))
        short = {}
        for spec in traced_specs:
            seqs = cells[(fam, spec)]
            part = tr[(tr["family"] == fam) & (tr["solver"] == spec)]
            probs = sorted(int(p) for p in np.unique(part["problem"].to_numpy()))
            rows = (solves["family"] == fam).to_numpy() & (solves["solver"] == spec).to_numpy() & \
                solves["problem"].isin(probs).to_numpy()
            succeeded = int(ok[rows].sum())
            if x == "iteration":
                grid = curves.full_iteration_grid(max(a[-1, 0] for a in seqs))
                xcol = 0
            else:
                grid = curves.time_grid(seqs, TIME_POINTS)
                xcol = 3
            for kind in kinds:
                col = 1 if kind == "position" else 2
                b = curves.band(seqs, col, xcol, grid)
                within = np.flatnonzero(b.q50 <= tol[kind])
                data.series.append(CurveSeries(fam, spec, kind, x, b.grid, b.q25, b.q50, b.q75, len(seqs), probs,
                                          succeeded, float(b.grid[within[0]]) if len(within) else math.nan,
                                          sparse=max(len(a) for a in seqs) <= 2))
            if len(seqs) < min_traced:
                short.setdefault(len(seqs), []).append(spec)
        for n, group in short.items():
            if n >= nfam:
                data.notes.append(Note(f"{fam}: all {nfam} of its problems were traced for {', '.join(group)}, "
                                       f"fewer than {min_traced}: each band is the spread of {n} solves"))
                continue
            target = min_traced if nfam > min_traced else "all"
            data.notes.append(Note(
                f"{fam}: only {n} of its {nfam} problems were traced for {', '.join(group)}: each band is the spread "
                f"of {n} solves (fewer than {min_traced}). To trace "
                f"{'every problem' if target == 'all' else str(target) + ' problems'} per family, re-run:",
                rerun_command(run, group, target)))
    if not data.series:
        fam, specs, nfam = missing[0]
        raise ResultsError(f"no traced solve of {', '.join(specs)} on {fam} in {run.path} (traces.csv holds a "
                           f"sample of problems per family; a run with --no-trace has none): re-run with "
                           f"{rerun_command(run, specs, min_traced if nfam > min_traced else 'all')}")
    for fam, specs, _ in missing:
        data.notes.append(Note(f"{fam}: no traced solve of {', '.join(specs)} (not drawn)"))
    return data


# ---------------------------------------------------------------- time and success

@dataclass
class TimeBox:
    """The five numbers of one spec's box of solve times on a family (supported solves, finite
    times): quartiles and Tukey's whiskers (the furthest times within 1.5 IQR of the box)."""
    family: str
    spec: str
    solves: int                # supported solves drawn
    successes: int
    q1: float
    median: float
    q3: float
    whisker_low: float
    whisker_high: float
    outliers: int              # times beyond the whiskers

    @property
    def label(self):
        return f"{self.spec} (n={self.solves})"


def time_data(run, selection):
    """{family: [TimeBox]} of the selection (a Selection: its notes name the specs without a
    supported solve on a family, which are left out of it: n/a there)."""
    s = run.solves
    att = figures.attempted_mask(s)
    ok = figures.success_mask(s)
    t = s["time_us"].to_numpy(dtype=float)
    out = Selection()
    for fam, specs in selection.items():
        boxes = []
        for spec in specs:
            m = (s["family"] == fam).to_numpy() & (s["solver"] == spec).to_numpy() & att & np.isfinite(t)
            v = t[m]
            if not len(v):
                out.notes.append(Note(f"{fam}: {spec} has no supported solve there (n/a, not drawn)"))
                continue
            q1, med, q3 = (float(x) for x in np.percentile(v, [25, 50, 75]))
            iqr = q3 - q1
            inside = v[(v >= q1 - 1.5 * iqr) & (v <= q3 + 1.5 * iqr)]
            boxes.append(TimeBox(fam, spec, int(len(v)), int(ok[m].sum()), q1, med, q3, float(inside.min()),
                                 float(inside.max()), int(len(v) - len(inside))))
        if boxes:
            out[fam] = boxes
    if not out:
        raise ResultsError(f"no supported solve of the chosen specs on {', '.join(selection)} in {run.path}")
    return out


@dataclass
class SuccessBar:
    family: str
    spec: str
    solves: int
    successes: int
    rate: float                # success rate over all solves (nan: n/a, no supported solve)
    low: float                 # Wilson 95 % interval
    high: float
    available: bool

    @property
    def label(self):
        return f"{self.spec} (n={self.solves})"


def success_data(run, selection):
    """{family: [SuccessBar]} of the selection: figures.summarize's success rate and Wilson
    interval of each chosen cell; n/a cells are kept with available False (named, not drawn as
    0 %)."""
    summ = figures.summarize(run, intervals=False).set_index(["family", "solver"])
    out = {}
    for fam, specs in selection.items():
        bars = []
        for spec in specs:
            if (fam, spec) not in summ.index:
                continue
            r = summ.loc[(fam, spec)]
            avail = bool(r["available"])
            bars.append(SuccessBar(fam, spec, int(r["solves"]), int(r["successes"]),
                                   float(r["success_rate"]) if avail else math.nan,
                                   float(r["success_ci_low"]) if avail else math.nan,
                                   float(r["success_ci_high"]) if avail else math.nan, avail))
        if bars:
            out[fam] = bars
    return out
