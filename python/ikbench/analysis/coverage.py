"""Solution coverage: how many of a problem's distinct IK solutions a solver finds
(docs/analysis.md "Solution coverage").

    rows = solution_coverage(run)          # per family x solver, a DataFrame

A *reference* backend returns several solutions in one attempt (a closed form: `solutions` above
1 in solves.csv with `restarts` 0 in its parameters); a *multi-solution* backend is a numerical
one asked for every solution it meets over its restarts (`solutions=all` and `restarts` above 0).
The solutions of a solve are solutions.csv's rows when its `solutions` is above 1, else its q in
solves.csv when it converged, else none. Two solutions are the same when their joint-space
distance (configuration_distance: revolute angles wrapped to (-pi, pi], prismatic in m, ball and
free rotations by their relative angle) is at most DISTINCT_TOL.

Per problem: found = distinct solutions of the solve; reference count C = distinct solutions of
the reference solve; coverage = min(found, C) / C (problems with C = 0 are left out: the closed
form found nothing). Per family x solver: the mean over problems, with a percentile bootstrap
95 % interval (ikbench.analysis.stats.bootstrap_intervals), and the number of problems where found
exceeds C (more distinct answers than the closed form has: a sign that the closed form misses
some, or that the solutions differ by less than a meaningful amount).
"""

import math

import numpy as np
import pandas as pd

from . import stats
from ..io.results import NOT_ATTEMPTED, parse_q
from ..io.specs import spec_record, spec_records
from .verify import quat_to_matrix, rotation_angle

DISTINCT_TOL = 1e-3

COLUMNS = ["family", "solver", "role", "reference", "problems", "found_mean", "found_ci_low", "found_ci_high",
           "reference_mean", "coverage_mean", "coverage_ci_low", "coverage_ci_high", "problems_above"]


def wrap_angle(a):
    """Angles wrapped to (-pi, pi]."""
    w = np.remainder(np.asarray(a, dtype=float) + math.pi, 2 * math.pi) - math.pi
    return np.where(w == -math.pi, math.pi, w)


def _distance_plan(model):
    """Index arrays of a models.json model's q: revolute angles, prismatic (and free-joint
    position) coordinates, and the first index of each ball or free rotation quaternion."""
    rev, lin, rot = [], [], []
    for j in model["joints"]:
        t, i = j["type"], j["idx_q"]
        if t == "revolute":
            rev.append(i)
        elif t == "prismatic":
            lin.append(i)
        elif t == "free":
            lin.extend((i, i + 1, i + 2))
            rot.append(i + 3)
        elif t == "ball":
            rot.append(i)
    return np.array(rev, dtype=int), np.array(lin, dtype=int), np.array(rot, dtype=int)


def configuration_distances(model, q, others, plan=None):
    """Joint-space distances from configuration q (nq) to each row of `others` (k x nq) of a
    models.json model: the Euclidean norm over joints of revolute angle differences wrapped to
    (-pi, pi], prismatic differences, the relative rotation angle of ball joints and, for free
    joints, the position difference and the relative rotation angle. Vectorised over `others`."""
    rev, lin, rot = plan if plan is not None else _distance_plan(model)
    q = np.asarray(q, dtype=float)
    others = np.atleast_2d(np.asarray(others, dtype=float))
    sq = np.zeros(len(others))
    if rev.size:
        sq += np.sum(wrap_angle(q[rev] - others[:, rev]) ** 2, axis=1)
    if lin.size:
        sq += np.sum((q[lin] - others[:, lin]) ** 2, axis=1)
    for k in rot:
        Ra = quat_to_matrix(q[k:k + 4])
        Rb = quat_to_matrix(others[:, k:k + 4])
        sq += rotation_angle(Ra.T @ Rb) ** 2
    return np.sqrt(sq)


def configuration_distance(model, qa, qb):
    """Joint-space distance between configurations qa and qb (nq each): configuration_distances
    for one pair."""
    return float(configuration_distances(model, qa, [qb])[0])


def pairwise_distances(model, qs, plan=None):
    """(n, n) joint-space distances between every two of the configurations `qs` (n x nq): the
    values configuration_distances gives row by row, computed in one pass."""
    rev, lin, rot = plan if plan is not None else _distance_plan(model)
    Q = np.atleast_2d(np.asarray(qs, dtype=float))
    sq = np.zeros((len(Q), len(Q)))
    if rev.size:
        sq += np.sum(wrap_angle(Q[:, None, rev] - Q[None, :, rev]) ** 2, axis=2)
    if lin.size:
        sq += np.sum((Q[:, None, lin] - Q[None, :, lin]) ** 2, axis=2)
    for k in rot:
        R = quat_to_matrix(Q[:, k:k + 4])
        sq += rotation_angle(np.swapaxes(R, -1, -2)[:, None] @ R[None, :]) ** 2
    return np.sqrt(sq)


def distinct(model, qs, tol=DISTINCT_TOL, plan=None):
    """The configurations of `qs` that are more than `tol` from every earlier kept one (greedy,
    in order)."""
    if len(qs) <= 1:
        return list(qs)
    D = pairwise_distances(model, qs, plan if plan is not None else _distance_plan(model)) > tol
    kept = []
    for i in range(len(qs)):
        if not kept or bool(D[i, kept].all()):
            kept.append(i)
    return [qs[i] for i in kept]


def solver_roles(run):
    """{spec: "reference" | "multi"}: reference = returned more than one solution on some problem
    with restarts 0 (a closed form); multi = solutions=all with restarts above 0."""
    records = spec_records(run)
    s = run.solves
    most = s.groupby("solver", sort=False)["solutions"].max() if "solutions" in s else pd.Series(dtype=int)
    roles = {}
    for spec in run.solver_specs:
        p = spec_record(records, spec).parameters
        mode = p.get("solutions")
        restarts = p.get("restarts")
        try:
            restarts = int(restarts or 0)
        except (TypeError, ValueError):
            restarts = 0
        if mode == "all" and restarts > 0:
            roles[spec] = "multi"
        elif restarts == 0 and int(most.get(spec, 0)) > 1:
            roles[spec] = "reference"
    return roles


def _q(text, where):
    """A q text of a loaded run (its numbers were checked by ikbench.io.results when it was read) as
    an array; parse_q, which names what is wrong, for anything else."""
    try:
        return np.array(text.split(), dtype=float)
    except (AttributeError, ValueError):
        return parse_q(text, where)


def solve_solutions(run, specs=None):
    """{(family, problem, solver): [q arrays]} of every attempted solve (of the solver specs
    `specs`, default all): solutions.csv's rows when `solutions` > 1, else the solve's q when it
    converged, else []."""
    s = run.solves if specs is None else run.solves[run.solves["solver"].isin(list(specs))]
    extra = {}
    sol = run.solutions
    if sol is not None and len(sol):
        for f, p, sv, q in zip(sol["family"], sol["problem"], sol["solver"], sol["q"]):
            extra.setdefault((f, int(p), sv), []).append(_q(q, "solutions.csv: column 'q'"))
    out = {}
    att = ~s["status"].isin(NOT_ATTEMPTED).to_numpy()
    for i, (f, p, sv, n, conv, q) in enumerate(zip(s["family"], s["problem"], s["solver"], s["solutions"],
                                                   s["converged"], s["q"])):
        if not att[i]:
            continue
        key = (f, int(p), sv)
        if n > 1 and key in extra:
            out[key] = extra[key]
        elif conv:
            out[key] = [_q(q, "solves.csv: column 'q'")]
        else:
            out[key] = []
    return out


def solution_coverage(run, reference=None, tol=DISTINCT_TOL, seed=stats.BOOTSTRAP_SEED,
                      n_resamples=stats.BOOTSTRAP_RESAMPLES):
    """Per family x solver of the multi-solution and reference backends (solver_roles; `reference`
    names the reference spec, default the first reference backend of the run): COLUMNS. For a
    reference backend, found is its own distinct count and coverage is nan; without any
    reference, coverage is nan and found is still given. Empty when the run has neither."""
    run.require_version(2, "solution coverage")
    roles = solver_roles(run)
    if reference is not None:
        roles[reference] = "reference"
    refs = [s for s, r in roles.items() if r == "reference"]
    ref = reference or (refs[0] if refs else None)
    if not roles:
        return pd.DataFrame(columns=COLUMNS)
    sols = solve_solutions(run, roles)
    models = run.models or {}
    model_of = {(f, int(p)): m for f, p, m in zip(run.problems["family"], run.problems["problem"],
                                                  run.problems["model"])}
    counts = {}
    plans = {}
    for (f, p, sv), qs in sols.items():
        if sv in roles:
            m = model_of[(f, p)]
            if m not in plans:
                plans[m] = _distance_plan(models[m])
            counts[(f, p, sv)] = len(distinct(models[m], qs, tol, plans[m])) if qs else 0
    rows = []
    samples_found, samples_cov = [], []
    for (f, sv) in pd.unique(pd.Series(list(zip(run.solves["family"], run.solves["solver"])))):
        if sv not in roles:
            continue
        probs = sorted(p for (ff, p, s) in counts if ff == f and s == sv)
        if not probs:
            continue
        if ref is not None and sv != ref:  # the problems where the closed form found a solution
            probs = [p for p in probs if counts.get((f, p, ref), 0) > 0]
        found = np.array([counts[(f, p, sv)] for p in probs], dtype=float)
        refc = np.array([counts[(f, p, ref)] for p in probs], dtype=float) if ref is not None and sv != ref \
            else np.zeros(0)
        cov = np.minimum(found, refc) / refc if len(refc) else np.zeros(0)
        rows.append({"family": f, "solver": sv, "role": roles[sv], "reference": ref if sv != ref else None,
                     "problems": len(probs), "found_mean": float(found.mean()) if len(found) else math.nan,
                     "reference_mean": float(refc.mean()) if len(refc) else math.nan,
                     "coverage_mean": float(cov.mean()) if len(cov) else math.nan,
                     "problems_above": int((found > refc).sum()) if len(refc) else 0})
        samples_found.append(found)
        samples_cov.append(cov)
    df = pd.DataFrame(rows)
    if df.empty:
        return pd.DataFrame(columns=COLUMNS)
    kw = dict(seed=seed, n_resamples=n_resamples)
    df["found_ci_low"], df["found_ci_high"] = stats.bootstrap_intervals(samples_found, "mean", **kw)
    df["coverage_ci_low"], df["coverage_ci_high"] = stats.bootstrap_intervals(samples_cov, "mean", **kw)
    return df[COLUMNS]
