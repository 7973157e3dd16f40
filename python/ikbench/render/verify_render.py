"""The text of `python3 -m ikbench verify RUN_DIR`: the independent recomputation's report
(ikbench.analysis.verify.VerifyReport) and the quality columns' (ikbench.analysis.verify_quality),
each disagreement with its solves.csv line."""

from ..analysis.verify import BORDERLINE_RTOL, LIMIT_BORDERLINE_RTOL
from .numbers import number


def _e(v):
    return number(v, "sci", digits=3, infinite="inf")


def format_cross_check(report, limit=50):
    """The numpy cross-check's lines: held to the harness's verdict, or why there is none."""
    if report.cross_check is None:
        return ["verdict: this numpy recomputation's (no harness verdicts given: `--ikbench PATH` takes the "
                "harness's, `ikbench verify --verdicts`, and holds numpy to them)"]
    c = report.cross_check
    if c.empty:
        return [f"verdict: the harness's (`ikbench verify`); the independent numpy recomputation agrees with it on "
                f"all {report.cross_checked} solves (away from its borderline band)"]
    out = [f"CROSS-CHECK: the independent numpy recomputation differs from the harness's verdict on {len(c)} "
           f"verdict(s):"]
    for r in c.head(limit).itertuples(index=False):
        out.append(f"  solves.csv:{r.line}: {r.family} #{r.problem} {r.solver}: {r.what} harness {r.harness}, numpy "
                   f"{r.numpy}; position error {_e(r.position_error)} / {_e(r.numpy_position_error)} m, orientation "
                   f"error {_e(r.orientation_error)} / {_e(r.numpy_orientation_error)} rad")
    if len(c) > limit:
        out.append(f"  ... and {len(c) - limit} more")
    return out


def format_report(report, limit=50):
    d = report.disagreements
    out = [f"verify {report.run_path}: {report.checked} solves recomputed "
           f"({report.skipped} unsupported, invalid-input or without a configuration skipped); tolerances {report.tolerances[0]:g} m, "
           f"{report.tolerances[1]:g} rad from run.json"]
    out += format_cross_check(report, limit)
    out.append(f"largest |reported - recomputed| error: position {report.max_error_difference[0]:.3g} m, "
               f"orientation {report.max_error_difference[1]:.3g} rad")
    if report.borderline:
        out.append(f"{report.borderline} borderline row(s) (a recomputed error within a relative {BORDERLINE_RTOL:g} "
                   f"of its tolerance, or a rotation within {LIMIT_BORDERLINE_RTOL:g} of a limit) agree with what "
                   "they claim")
    if d is None or d.empty:
        out.append("OK: every converged and within_limits flag agrees with the recomputation" +
                   (f"; {report.collision_checked} collision_free flags re-checked in their scene agree"
                    if report.collision_checked else ""))
        return "\n".join(out) + "\n"
    ff = d["finding"].str.contains("false failure").sum()
    out.append(f"DISAGREE: {len(d)} row(s) ({report.false_successes} false successes: a claimed success (converged, "
               f"within limits, collision-free) the recomputation does not confirm; {ff} with a false failure):")
    for r in d.head(limit).itertuples(index=False):
        out.append(f"  solves.csv:{r.line}: {r.family} #{r.problem} {r.solver}: {r.finding}; claims converged "
                   f"{r.converged} within_limits {r.within_limits}, recomputed {r.recomputed_converged} / "
                   f"{r.recomputed_within_limits}; position error {_e(r.position_error)} -> "
                   f"{_e(r.recomputed_position_error)} m, orientation error {_e(r.orientation_error)} -> "
                   f"{_e(r.recomputed_orientation_error)} rad")
    if len(d) > limit:
        out.append(f"  ... and {len(d) - limit} more")
    return "\n".join(out) + "\n"


def format_quality(report, limit=50):
    if report is None:
        return ""
    d = report.disagreements
    out = [f"quality: outcome and quality columns of {report.checked} solves recomputed (numpy Jacobian, "
           "outcomes.py's rule)"]
    if d.empty:
        out.append("OK: every outcome, manipulability, limit margin and motion figure agrees")
    else:
        out.append(f"DISAGREE: {len(d)} row(s):")
        for r in d.head(limit).itertuples(index=False):
            out.append(f"  solves.csv:{r.line}: {r.family} #{r.problem} {r.solver}: column '{r.column}' is "
                       f"{r.value}, recomputed {r.recomputed}")
    return "\n".join(out) + "\n"
