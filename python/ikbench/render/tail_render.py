"""The text of `python3 -m ikbench tail RUN_DIR`: each cell's tail figures and the slowest solves
with their causes (ikbench.analysis.tail.TailReport)."""

from ..analysis.tail import ITERATIONS_FACTOR, MACHINE_FACTOR
from .numbers import number
from .tables import fmt_num, render


def _ratio(v):
    return number(v, "fixed", digits=1, infinite="inf") + "x" if v == v else "-"


def _load(load):
    if not load:
        return "load: not recorded"
    parts = [f"{k} {load[k]}" for k in ("start", "end") if k in load]
    samples = load.get("samples")
    if isinstance(samples, dict) and "max" in samples:
        parts.append(f"max {samples['max']}")
    cores = load.get("cores")
    text = "load average " + ", ".join(parts) if parts else "load: recorded without averages"
    if cores:
        text += f" on {cores} cores"
    if load.get("noisy"):
        text += " (marked noisy)"
    return text


def format_report(report, limit=50):
    head = ["family", "solver", "solves", "median", "p99", "p99.9", "max [us]", "p99.9/med", "max/med",
            f"> {number(report.threshold_us, 'grouped')} us"]
    rows = [[c.family, c.solver, str(c.solves), fmt_num(c.median_us, "time"), fmt_num(c.p99_us, "time"),
             fmt_num(c.p999_us, "time"), fmt_num(c.max_us, "time"), _ratio(c.p999_over_median),
             _ratio(c.max_over_median), str(c.over_threshold)] for c in report.cells]
    out = [f"the slow tail: {_load(report.load)}", render(head, rows), ""]
    share = number(100.0 * report.fraction, "fixed", digits=2 if report.fraction < 0.01 else 1)
    out.append(f"the slowest {share} % of each cell (at least one solve), {len(report.slowest)} solves; "
               "causes: " + (", ".join(f"{k} {v}" for k, v in report.causes.items()) or "none"))
    head = ["family", "solver", "problem", "status", "time [us]", "/med", "attempts", "iterations", "/med",
            "t/iter /med", "cause"]
    rows = [[s.family, s.solver, f"{s.problem} {s.problem_name}".strip(), s.status, fmt_num(s.time_us, "time"),
             _ratio(s.over_median), str(s.attempts), str(s.iterations), _ratio(s.iterations_over_median),
             _ratio(s.time_per_iteration_over_median), s.cause] for s in report.slowest[:limit]]
    if rows:
        out.append(render(head, rows, left=3))
    if len(report.slowest) > limit:
        out.append(f"... and {len(report.slowest) - limit} more (--max-rows)")
    out.append("causes: budget = ended at its time budget; restarts = more attempts than the cell's median solve; "
               "iterations = at least "
               f"{ITERATIONS_FACTOR:g}x the median iterations; machine = ordinary work at >= "
               f"{MACHINE_FACTOR:g}x the median time per iteration (descheduled, page fault, cold cache); work = none of these")
    return "\n".join(out) + "\n"
