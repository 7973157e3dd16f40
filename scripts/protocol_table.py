#!/usr/bin/python3
"""The measured tables of docs/protocols.md, from protocol runs (ikbench run --protocol ...).

    /usr/bin/python3 scripts/protocol_table.py trac-ik RUN_DIR...      # beside TRAC-IK's published table
    /usr/bin/python3 scripts/protocol_table.py ikfast-test RUN_DIR...  # outcome rates per arm and solver
    /usr/bin/python3 scripts/protocol_table.py seeds RUN_DIR...        # success per seed regime
    /usr/bin/python3 scripts/protocol_table.py tracking RUN_DIR...     # success and joint motion per path

`trac-ik` prints, per arm and solver, the success rate with its Wilson 95 % interval and the mean
time over all solves (failures included, as the published table counts them) with its bootstrap
interval, and, for the arms the published table has (python/ikbench/data/trac_ik_published.csv:
the trac_ik README's table, tag v1.4.6, 10 000 targets, 1e-5, 5 ms), its KDL, KDL-RR and TRAC-IK
figures. `ikfast-test` prints per arm and solver the rates of converged, wrong and not-found
answers on the IKFast targets and of refused and wrong answers on the unreachable ones. `seeds`
prints per arm, regime and solver the success rate with its interval, the fraction of targets
solved from any of their starts and the median time; `tracking` per path and solver the success
rate, the largest joint jump, the branch switches and the RMS joint velocity, acceleration and
jerk. Every
figure is ikbench.analysis.figures.summarize's (docs/analysis.md, docs/protocols.md); each run's load is
printed under the table. Exit status 0, 2 on bad input.
"""
import argparse
import csv
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "python"))

from tabulate import tabulate  # noqa: E402

from ikbench.analysis import figures
from ikbench.io import results  # noqa: E402

PUBLISHED = REPO / "python" / "ikbench" / "data" / "trac_ik_published.csv"


def pct(v, lo=None, hi=None):
    if v is None or v != v:
        return "n/a"
    return f"{100 * v:.2f}%" + (f" [{100 * lo:.2f}, {100 * hi:.2f}]" if lo is not None and lo == lo else "")


def load(paths, protocol):
    out = []
    for p in paths:
        run = results.load(p)
        if run.meta.get("protocol") != protocol:
            raise SystemExit(f"protocol_table.py: {p} is not a run of protocol '{protocol}' "
                             f"(run.json protocol: {run.meta.get('protocol')!r})")
        out.append(run)
    return out


def robot_of(run):
    robots = figures.robot_families(run)
    return next(iter(robots.values()), "?") if robots else "?"


def load_line(run):
    ld = figures.run_load(run) or {}
    s = ld.get("samples") or {}
    return (f"{run.path.name}: load average {ld.get('start', '?')} -> {ld.get('end', '?')} "
            f"(max {s.get('max', '?')}) on {ld.get('cores', '?')} cores, {run.meta.get('threads')} thread(s)"
            + (", noisy" if ld.get("noisy") else ""))


def trac_ik(runs):
    published = {r["robot"]: r for r in csv.DictReader(PUBLISHED.open())}
    rows = []
    for run in runs:
        s = figures.summarize(run)
        robot = robot_of(run)
        pub = published.get(robot)
        for r in s.to_dict("records"):
            rows.append([robot, r["dof"], r["solver"], pct(r["success_rate"], r["success_ci_low"], r["success_ci_high"]),
                         f"{r['time_us_mean'] / 1000:.3f} [{r['time_us_mean_ci_low'] / 1000:.3f}, "
                         f"{r['time_us_mean_ci_high'] / 1000:.3f}]", f"{r['time_us_median'] / 1000:.4f}",
                         pct(r["timed_out_rate"])])
        if pub:
            for name, key in (("KDL (published)", "kdl"), ("KDL-RR (published)", "kdl_rr"),
                              ("TRAC-IK (published)", "trac_ik")):
                rows.append([robot, pub["dof"], name, pct(float(pub[f"{key}_success"])),
                             f"{float(pub[f'{key}_mean_ms']):.2f}", "", ""])
    head = ["arm", "DOF", "solver", "success [95% CI]", "mean time [ms] [95% CI]", "median [ms]", "timed out"]
    return tabulate(rows, head, tablefmt="pipe", disable_numparse=True)


def ikfast(runs):
    rows = []
    for run in runs:
        s = figures.summarize(run)
        robot = robot_of(run)
        fams = {f["name"]: f for f in run.families}
        for r in s.to_dict("records"):
            unreachable = fams.get(r["family"], {}).get("targets") == "unreachable"
            if not r["supported"]:
                rows.append([robot, r["family"], r["solver"], "n/a", "", "", "", ""])
                continue
            rows.append([robot, r["family"], r["solver"],
                         "" if unreachable else pct(r["success_rate"], r["success_ci_low"], r["success_ci_high"]),
                         pct(r["wrong_rate"], r["wrong_ci_low"], r["wrong_ci_high"]),
                         "" if unreachable else pct(r["not_found_rate"], r["not_found_ci_low"], r["not_found_ci_high"]),
                         pct(r["refused_rate"], r["refused_ci_low"], r["refused_ci_high"]) if unreachable else "",
                         pct(r["timed_out_rate"])])
    head = ["arm", "family", "solver", "correct", "wrong", "no solution", "refused (unreachable)", "timed out"]
    return tabulate(rows, head, tablefmt="pipe", disable_numparse=True)


def seeds(runs):
    rows = []
    for run in runs:
        robot = robot_of(run)
        for r in figures.summarize(run).to_dict("records"):
            solved = r["targets_solved_rate"]
            rows.append([robot, r["start"], r["solver"], pct(r["success_rate"], r["success_ci_low"], r["success_ci_high"]),
                         "" if solved != solved else pct(solved),
                         f"{r['time_us_median']:.1f} [{r['time_us_median_ci_low']:.1f}, "
                         f"{r['time_us_median_ci_high']:.1f}]"])
    head = ["arm", "start", "solver", "success [95% CI]", "targets solved from any start",
            "median time [µs, bootstrap 95% CI]"]
    return tabulate(rows, head, tablefmt="pipe", disable_numparse=True)


def tracking(runs):
    rows = []
    for run in runs:
        for r in figures.summarize(run).to_dict("records"):
            rows.append([r["family"], r["solver"], pct(r["success_rate"], r["success_ci_low"], r["success_ci_high"]),
                         f"{r['joint_jump_max']:.3f}", f"{r['branch_switches']:.0f}", f"{r['joint_velocity_rms']:.2f}",
                         f"{r['joint_acceleration_rms']:.3g}", f"{r['joint_jerk_rms']:.3g}"])
    head = ["path", "solver", "success [95% CI]", "largest jump [rad]", "branch switches", "RMS velocity [rad/s]",
            "RMS acceleration [rad/s²]", "RMS jerk [rad/s³]"]
    return tabulate(rows, head, tablefmt="pipe", disable_numparse=True)


TABLES = {"trac-ik": trac_ik, "ikfast-test": ikfast, "seeds": seeds, "tracking": tracking}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("protocol", choices=list(TABLES))
    ap.add_argument("runs", nargs="+", help="run directories of that protocol")
    a = ap.parse_args(argv)
    try:
        runs = load(a.runs, a.protocol)
    except results.ResultsError as e:
        print(f"protocol_table.py: {e}", file=sys.stderr)
        return 2
    print(TABLES[a.protocol](runs))
    print()
    for run in runs:
        print(f"- {load_line(run)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
