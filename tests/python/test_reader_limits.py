"""A run within the documented limits is readable: a q of 10 000 joints (`ikbench run --chain
10000`, the harness's limit) is a CSV field of about 250 000 characters, beyond the csv module's
default field limit (131 072); results.load, verify and the command line read it."""
import json

import numpy as np
import synth
from conftest import cli

from ikbench.io import results
from ikbench.render import verify_render
from ikbench.analysis import verify

JOINTS = 10_000
# A number as long as the shortest round-trip text of a double gets (24 characters): a rotation of
# 1e-300 rad, which moves no body by a representable amount, so the planar chain's FK is unchanged.
TINY = "-1.2345678901234567e-300"


def _ten_thousand_joint_run(directory):
    """synth's planar run with 9 998 extra revolute joints (about z, at the second joint's origin)
    between the second joint and the tip: nq = 10 000, every returned q written in full."""
    d = synth.make_run(directory, problems=3, families=("planar-position",), solvers={"dls": (1.0, 1.0, (5, 9))},
                       traces=False, unsupported=())
    doc = json.loads((d / "models.json").read_text())
    m = doc["models"][0]
    j0, j1, tip = m["joints"]
    extra = [dict(j1, name=f"x{k}", body=f"x{k}", parent=1 + k, idx_q=2 + k, idx_v=2 + k,
                  parent_T_joint={"xyz": [0, 0, 0], "quat_xyzw": [0, 0, 0, 1]}) for k in range(JOINTS - 2)]
    m["joints"] = [j0, j1] + extra + [dict(tip, parent=JOINTS - 1, idx_q=JOINTS, idx_v=JOINTS)]
    m["nq"] = m["nv"] = JOINTS
    (d / "models.json").write_text(json.dumps(doc) + "\n")
    probs = [json.loads(ln) for ln in (d / "problems.jsonl").read_text().splitlines()]
    for p in probs:
        p["q0"] = p["q0"] + [0.0] * (JOINTS - 2)
        p["goals"][0]["body_index"] = JOINTS  # the tip, after the 10 000 revolute joints
    (d / "problems.jsonl").write_text("".join(json.dumps(p) + "\n" for p in probs))
    lines = (d / "solves.csv").read_text().splitlines()
    header = lines[0].split(",")
    kq, kdof = header.index("q"), header.index("dof")
    out = [lines[0]]
    for ln in lines[1:]:
        cells = ln.split(",")
        cells[kq] = cells[kq] + " " + " ".join([TINY] * (JOINTS - 2))
        cells[kdof] = str(JOINTS)
        out.append(",".join(cells))
    (d / "solves.csv").write_text("\n".join(out) + "\n")
    synth.rewrite_manifest(d)
    return d


def test_a_q_of_10000_joints_is_read_and_verified(tmp_path):
    d = _ten_thousand_joint_run(tmp_path / "big")
    longest = max(len(ln) for ln in (d / "solves.csv").read_text().splitlines())
    assert longest > 131072 * 1.8  # well beyond the csv module's default field limit
    run = results.load(d)
    assert len(run.solves) == 3 and run.models["m0"]["nq"] == JOINTS
    q = run.q_of(0)
    assert q.shape == (JOINTS,) and q[-1] == float(TINY)
    rep = verify.verify_run(run)
    assert rep.checked == 3 and rep.disagreements.empty, verify_render.format_report(rep)
    assert np.all(run.solves["converged"])
    p = cli("verify", d, check=0)
    assert "OK: every converged and within_limits flag agrees" in p.stdout
    cli("summary", d, check=0)


def test_the_field_limit_is_the_documented_line_limit(tmp_path):
    """The csv module's limit is raised to MAX_LINE_BYTES (a field is never longer than its line),
    which the q of the largest model the loaders accept fits: 100 000 joints, at most 7 numbers
    each, 25 characters a number with its space."""
    import csv

    assert csv.field_size_limit() >= results.MAX_LINE_BYTES >= 100_000 * 7 * 25
