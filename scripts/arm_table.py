#!/usr/bin/python3
"""The per-arm table of the `auto` preset (docs/tuning.md), and the corpus suites of its tuning.

    /usr/bin/python3 scripts/arm_table.py table [--samples 10000] [--out DIR] [--sched normal|fifo]
                                                [--solver auto] [--reference kdl-lma:time_budget_us=5000]
                                                [--arms KEY,KEY...] [--seed S] [--ikbench PATH]
    /usr/bin/python3 scripts/arm_table.py suites --out DIR [--count 2000]

`table` runs, for every arm chain of the shipped models (scenarios/data/robots) and of the shared
corpus, `ikbench run --urdf FILE --base B --tip T --samples N --threads 1 --no-trace --solvers
SOLVER,REFERENCE` (the TRAC-IK protocol: FK of uniform configurations within limits, start at the
middle of the limits, 1e-5 m / 1e-5 rad by FK and within limits; the 5 ms budget is in the
specs), then prints a markdown table per arm from the analysis library's figures (success with its
Wilson interval, median and mean time and the ratio of means with bootstrap intervals, median
iterations) and writes it to DIR/arm_table.md with DIR/arm_table.json. `--sched fifo` runs each
`ikbench run` under `chrt -f 1` (SCHED_FIFO: the run is not preempted by the machine's other
processes; needs root).

`suites` writes DIR/corpus-tune.json and DIR/corpus-eval.json: the corpus arms of the tuning group
and of the evaluation group as suite files with absolute paths (written at run time, never
shipped), for `ikbench tune --tune-on arms-tune+DIR/corpus-tune.json --evaluate-on
arms-eval+DIR/corpus-eval.json`.

The corpus is $IKBENCH_CORPUS_DIR, default ../shared/data beside the source tree; without it the
table has the shipped arms only and says so. Exit status 0, 2 on bad input.
"""
import argparse
import json
import math
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "python"))

from tabulate import tabulate  # noqa: E402

from ikbench.io import results, runner
from ikbench.analysis import tune  # noqa: E402
from ikbench.io.safe_io import atomic_write_text, output_directory  # noqa: E402

# key, label, where (shipped | corpus), file, base, tip, group (the robot is in the tuning set of the
# auto preset, or only ever evaluated)
ARMS = [
    ("ur5", "UR5", "shipped", "robots/ur5.urdf", "base_link", "tool0", "tuning"),
    ("panda", "Panda", "shipped", "robots/panda.urdf", "panda_link0", "panda_hand_tcp", "tuning"),
    ("iiwa14", "iiwa 14", "shipped", "robots/iiwa14.urdf", "base_link", "tool0", "evaluation"),
    ("corpus-ur5", "UR5", "corpus", "robots/ur5.urdf", "base_link", "tool0", "tuning"),
    ("corpus-abb-irb2400", "ABB IRB 2400", "corpus", "robots/abb_irb2400.urdf", "base_link", "tool0", "evaluation"),
    ("corpus-kuka-kr210", "KUKA KR 210 L150", "corpus", "robots/kuka_kr210l150.urdf", "base_link", "tool0",
     "tuning"),
    ("corpus-iiwa14", "KUKA LBR iiwa 14 R820", "corpus", "robots/kuka_lbr_iiwa_14_r820.urdf", "base_link", "tool0",
     "evaluation"),
    ("corpus-gen3", "Kinova Gen3 7-DOF", "corpus", "robots/kinova_gen3_7dof.urdf", "base_link", "end_effector_link",
     "evaluation"),
    ("corpus-sawyer", "Sawyer", "corpus", "robots/sawyer.urdf", "base", "right_hand", "evaluation"),
    ("corpus-panda", "Panda", "corpus", "robots/panda.urdf", "panda_link0", "panda_hand_tcp", "tuning"),
    ("corpus-baxter-left", "Baxter left arm", "corpus", "robots/baxter.urdf", "base", "left_gripper", "evaluation"),
    ("corpus-pr2-left", "PR2 left arm + torso", "corpus", "robots/pr2.urdf", "base_footprint",
     "l_gripper_tool_frame", "evaluation"),
    ("corpus-romeo-left", "Romeo left arm + trunk", "corpus", "robots/romeo_small.urdf", "base_link", "l_gripper",
     "evaluation"),
]
TARGET_SUCCESS = 0.9999
TARGET_RATIO = 0.1


class Bad(Exception):
    pass


def corpus_dir():
    env = os.environ.get("IKBENCH_CORPUS_DIR")
    return Path(env) if env else (REPO.parent / "shared" / "data")


def arm_file(arm):
    where, rel = arm[2], arm[3]
    base = tune.data_directory() if where == "shipped" else corpus_dir()
    return base / rel


def available_arms(keys=None):
    arms = [a for a in ARMS if keys is None or a[0] in keys]
    if keys is not None:
        unknown = sorted(set(keys) - {a[0] for a in ARMS})
        if unknown:
            raise Bad(f"--arms: unknown arm(s) {', '.join(unknown)} (known: {', '.join(a[0] for a in ARMS)})")
    have = [a for a in arms if arm_file(a).is_file()]
    missing = [a for a in arms if not arm_file(a).is_file()]
    return have, missing


# ---------------------------------------------------------------- suites

def write_suites(out, count):
    have, missing = available_arms()
    corpus = [a for a in have if a[2] == "corpus"]
    if not corpus:
        raise Bad(f"no corpus arm found under {corpus_dir()} (set IKBENCH_CORPUS_DIR)")
    output_directory(out)
    options = {"position_tolerance": 1e-5, "orientation_tolerance": 1e-5, "max_iterations": 500,
               "time_budget_us": 0, "stall_iterations": 20}
    written = []
    for group, name, seed in (("tuning", "corpus-tune", 20261103), ("evaluation", "corpus-eval", 20261104)):
        fams = []
        for a in corpus:
            if a[6] != group or (group == "tuning" and a[0] in ("corpus-ur5", "corpus-panda")):
                # UR5 and Panda are tuned on through the shipped models (arms-tune)
                continue
            fams.append({"name": a[0] + "-pose",
                         "description": f"{a[1]} {a[4]} -> {a[5]}, reachable pose targets within limits",
                         "type": "urdf", "file": str(arm_file(a).resolve()), "base": a[4], "tip": a[5],
                         "count": count, "goals": {"set": "reachable", "kind": "pose", "start": "nominal"}})
        doc = {"name": name, "description": f"corpus arms of the {group} group of the auto preset "
               f"(written by scripts/arm_table.py suites from {corpus_dir()})", "seed": seed, "options": options,
               "solvers": ["auto", "kdl-lma:time_budget_us=5000"], "families": fams}
        written.append(atomic_write_text(out / f"{name}.json", json.dumps(doc, indent=1) + "\n"))
    return written, missing


# ---------------------------------------------------------------- table

def load_average():
    return tune.load_average()


def run_arm(exe, arm, out, samples, seed, solvers, sched):
    cmd = [exe, "run", "--urdf", str(arm_file(arm)), "--base", arm[4], "--tip", arm[5], "--samples", str(samples),
           "--threads", "1", "--no-trace", "--solvers", solvers, "--out", str(out), "--force", "--progress", "none",
           "--no-summary", "--seed", str(seed)]
    cmd = tune.sched_prefix(sched) + cmd
    before = load_average()
    runner.run(cmd)  # a failure is a ResultsError naming the command's exit and last lines
    after = load_average()
    return cmd, before, after


def _pct(v, lo, hi):
    if v is None or not math.isfinite(v):
        return "n/a"
    return f"{100 * v:.2f}% [{100 * lo:.2f}, {100 * hi:.2f}]"


def _num(v, lo=None, hi=None, f="{:.1f}"):
    if v is None or not math.isfinite(v):
        return "n/a"
    s = f.format(v)
    if lo is not None and hi is not None and math.isfinite(lo) and math.isfinite(hi):
        s += f" [{f.format(lo)}, {f.format(hi)}]"
    return s


def table_rows(rundirs, solver, reference):
    """Per arm: the figures of `solver` and `reference` from the analysis library."""
    rows = []
    for arm, d, cmd, before, after in rundirs:
        run = results.load(d)
        _, fam = tune.set_figures(run.solves, reference)
        a = fam[fam["solver"] == solver].iloc[0]
        r = fam[fam["solver"] == reference].iloc[0]
        rows.append({"key": arm[0], "arm": arm[1], "where": arm[2], "file": arm[3], "chain": f"{arm[4]} -> {arm[5]}",
                     "group": arm[6], "dof": int(a["dof"]), "solves": int(a["solves"]),
                     "successes": int(a["successes"]), "success": float(a["success_rate"]),
                     "success_ci": [float(a["success_ci_low"]), float(a["success_ci_high"])],
                     "median_us": float(a["time_us_median"]),
                     "median_ci": [float(a["time_us_median_ci_low"]), float(a["time_us_median_ci_high"])],
                     "mean_us": float(a["time_us_mean"]),
                     "mean_ci": [float(a["time_us_mean_ci_low"]), float(a["time_us_mean_ci_high"])],
                     "iterations_median": float(a["iterations_median"]),
                     "p99_us": float(a["time_us_p99"]), "max_us": float(a["time_us_max"]),
                     "over_budget": int((run.solves[run.solves["solver"] == solver]["time_us"] > 5000).sum()),
                     "reference_success": float(r["success_rate"]),
                     "reference_mean_us": float(r["time_us_mean"]),
                     "reference_mean_ci": [float(r["time_us_mean_ci_low"]), float(r["time_us_mean_ci_high"])],
                     "ratio": float(a["time_ratio"]),
                     "ratio_ci": [float(a["time_ratio_ci_low"]), float(a["time_ratio_ci_high"])],
                     "results": str(d), "command": " ".join(cmd), "load_average_before": before,
                     "load_average_after": after})
        row = rows[-1]
        row["meets_success"] = row["success"] >= TARGET_SUCCESS
        row["meets_ratio"] = row["ratio"] <= TARGET_RATIO
    return rows


def markdown(rows, solver, reference, missing, samples, sched):
    headers = ["arm (chain)", "DOF", "robot in", f"`{solver}` success [95% CI]", "median [us]", "mean [us]",
               "median it.", f"`{reference}` success", "its mean [us]", "ratio of means", "target"]
    align = ["left", "right", "left", "left", "left", "left", "right", "right", "left", "left", "left"]
    table = []
    for r in rows:
        src = "shipped" if r["where"] == "shipped" else "corpus"
        ok = ("yes" if r["meets_success"] and r["meets_ratio"] else
              "no: " + ", ".join(x for x, m in (("success", r["meets_success"]), ("time", r["meets_ratio"])) if not m))
        table.append([f"{r['arm']} ({src}; {r['chain']})", str(r["dof"]),
                      "tuning set" if r["group"] == "tuning" else "evaluation only",
                      f"{_pct(r['success'], *r['success_ci'])} ({r['solves'] - r['successes']} failed)",
                      _num(r["median_us"], *r["median_ci"]), _num(r["mean_us"], *r["mean_ci"]),
                      f"{r['iterations_median']:.0f}", f"{100 * r['reference_success']:.2f}%",
                      _num(r["reference_mean_us"], *r["reference_mean_ci"]),
                      _num(r["ratio"], *r["ratio_ci"], f="{:.3f}"), ok])
    L = tabulate(table, headers=headers, tablefmt="pipe", disable_numparse=True,
                 colalign=align if table else None).splitlines()
    L += ["", f"{samples} random reachable pose targets per arm (`ikbench run --urdf ... --samples {samples} --threads 1`"
          f"{', under chrt -f 1' if sched == 'fifo' else ''}); success = converged (1e-5 m and 1e-5 rad by FK) and "
          "within limits over all solves [Wilson 95 % interval]; times over supported solves [percentile bootstrap "
          "95 % intervals]; ratio of means: the two means measured in the same run, its interval the two means' "
          "intervals divided (conservative). Target: success >= 99.99 % and ratio <= 0.1. \"robot in tuning set\": "
          "the recipe's parameters were chosen on targets of this robot (other targets than these); "
          "\"evaluation only\": never seen while tuning."]
    loads = [x for r in rows for x in (r["load_average_before"], r["load_average_after"]) if x]
    if loads:
        L.append(f"Load average (1 min) during the runs: {min(x[0] for x in loads):.2f} to "
                 f"{max(x[0] for x in loads):.2f}.")
    over = [r for r in rows if r["over_budget"]]
    if over:
        L.append("Solves of `" + solver + "` over the 5 ms budget (wall clock: preempted solves on a loaded machine "
                 "count too): " + ", ".join(f"{r['arm']} ({r['where']}) {r['over_budget']}" for r in over) + ".")
    if missing:
        L.append("Not run (file not found): " + ", ".join(f"{a[1]} ({arm_file(a)})" for a in missing) +
                 (f"; the corpus is $IKBENCH_CORPUS_DIR, default {corpus_dir()}" if any(a[2] == "corpus"
                                                                                        for a in missing) else ""))
    return "\n".join(L) + "\n"


def cmd_table(args):
    exe = tune.find_ikbench(args.ikbench)
    keys = [k.strip() for k in args.arms.split(",")] if args.arms else None
    have, missing = available_arms(keys)
    if not have:
        raise Bad("no arm file found")
    out = Path(args.out)
    output_directory(out)
    solvers = f"{args.solver},{args.reference}"
    rundirs = []
    for arm in have:
        d = out / arm[0]
        print(f"arm_table: {arm[1]} ({arm[2]}) -> {d}", file=sys.stderr)
        cmd, before, after = run_arm(exe, arm, d, args.samples, args.seed, solvers, args.sched)
        rundirs.append((arm, d, cmd, before, after))
    rows = table_rows(rundirs, args.solver, args.reference)
    md = markdown(rows, args.solver, args.reference, missing, args.samples, args.sched)
    atomic_write_text(out / "arm_table.md", md)
    atomic_write_text(out / "arm_table.json", json.dumps({"solver": args.solver, "reference": args.reference,
                                                          "samples": args.samples, "seed": args.seed,
                                                          "sched": args.sched, "rows": rows,
                                                          "missing": [a[0] for a in missing]}, indent=1) + "\n")
    sys.stdout.write(md)
    return 0


def cmd_suites(args):
    written, missing = write_suites(Path(args.out), args.count)
    for p in written:
        print(p)
    for a in missing:
        print(f"arm_table: not found, left out: {arm_file(a)}", file=sys.stderr)
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    t = sub.add_parser("table", help="run every arm and print the per-arm table")
    t.add_argument("--samples", type=int, default=10000, help="targets per arm (default 10000)")
    t.add_argument("--seed", type=int, default=1, help="seed of `ikbench run` (default 1, as ikbench run --urdf)")
    t.add_argument("--solver", default="auto", help="the spec of the table (default auto)")
    t.add_argument("--reference", default="kdl-lma:time_budget_us=5000", help="the reference spec (default "
                   "kdl-lma:time_budget_us=5000, unit weights)")
    t.add_argument("--arms", help="only these arms (keys: " + ", ".join(a[0] for a in ARMS) + ")")
    t.add_argument("--out", default="results/arm-table", help="directory of the runs and the table")
    t.add_argument("--sched", choices=("normal", "fifo"), default="normal",
                   help="fifo: run each `ikbench run` under chrt -f 1 (needs root)")
    t.add_argument("--ikbench", help="the harness binary (default: the source tree's build/release)")
    t.set_defaults(func=cmd_table)
    s = sub.add_parser("suites", help="write corpus-tune.json and corpus-eval.json (absolute corpus paths)")
    s.add_argument("--out", required=True, help="directory of the suite files")
    s.add_argument("--count", type=int, default=2000, help="targets per arm (default 2000)")
    s.set_defaults(func=cmd_suites)
    args = p.parse_args(argv)
    if getattr(args, "samples", 1) < 1 or getattr(args, "count", 1) < 1:
        p.error("--samples / --count must be positive")
    try:
        return args.func(args)
    except (Bad, results.ResultsError) as e:
        print(f"arm_table: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
