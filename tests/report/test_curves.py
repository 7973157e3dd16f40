"""ikbench.analysis.curves: convergence bands, time ECDFs and success vs DOF, on synthetic data with known answers."""
import numpy as np
import pandas as pd
import synth

from ikbench.analysis import curves, figures
from ikbench.io import results


def _traces(rows):
    return pd.DataFrame(rows, columns=["family", "solver", "problem", "iteration", "position_error",
                                       "orientation_error", "time_us"])


def test_step_values_hold_the_last_record_and_the_final_error():
    xs = np.array([0.0, 2.0, 5.0])
    ys = np.array([1.0, 0.1, 0.01])
    got = curves.step_values(xs, ys, np.array([-1, 0, 1, 2, 4, 5, 100]))
    assert got.tolist() == [1.0, 1.0, 1.0, 0.1, 0.1, 0.01, 0.01]


def test_convergence_median_and_band_over_solves():
    # three solves of one cell; errors halve per iteration from 1, 2 and 4, and stop at 2, 3, 4 iterations
    rows = []
    for p, (start, stop) in enumerate(((1.0, 2), (2.0, 3), (4.0, 4))):
        for it in range(stop + 1):
            rows.append(["f", "s", p, it, start * 0.5 ** it, 0.0, 10.0 * (it + 1)])
    (c,) = curves.convergence(_traces(rows))
    assert c.kinds == ["position"] and c.solves == 3 and c.records_max == 5 and not c.sparse
    b = c.iteration["position"]
    assert b.grid.tolist() == [0, 1, 2, 3, 4]
    per_solve = np.array([[1.0 * 0.5 ** min(i, 2) for i in range(5)], [2.0 * 0.5 ** min(i, 3) for i in range(5)],
                          [4.0 * 0.5 ** i for i in range(5)]])
    np.testing.assert_array_equal(b.q50, np.percentile(per_solve, 50, axis=0))
    np.testing.assert_array_equal(b.q25, np.percentile(per_solve, 25, axis=0))
    np.testing.assert_array_equal(b.q75, np.percentile(per_solve, 75, axis=0))
    # a solve that stopped keeps its final error: at iteration 4 the first solve still counts 0.25
    assert per_solve[0, 4] == 0.25
    t = c.time["position"]
    assert t.grid[0] == 10.0 and t.grid[-1] == 50.0 and len(t.grid) == 200


def test_sparse_cells_and_final_records():
    rows = [["f", "kdl", p, it, e, 0.0, t] for p, recs in enumerate(([(0, 1.0, 0.0), (7, 1e-7, 30.0)],
                                                                    [(0, 2.0, 0.0), (11, 1e-8, 50.0)]))
            for it, e, t in recs]
    (c,) = curves.convergence(_traces(rows))
    assert c.sparse
    assert c.final["iteration"] == (8.0, 9.0, 10.0)
    assert c.final["position_start"][1] == 1.5
    assert c.final["position"][1] == np.percentile([1e-7, 1e-8], 50)


def test_orientation_kind_only_when_an_orientation_error_is_above_zero():
    rows = [["f", "s", 0, 0, 1.0, 0.0, 1.0], ["f", "s", 0, 1, 0.5, 0.0, 2.0],
            ["g", "s", 0, 0, 1.0, 0.3, 1.0], ["g", "s", 0, 1, 0.5, 0.1, 2.0]]
    kinds = {c.family: c.kinds for c in curves.convergence(_traces(rows))}
    assert kinds == {"f": ["position"], "g": ["position", "orientation"]}


def test_compact_iteration_grid():
    g = curves.compact_iteration_grid(500)
    assert g[0] == 0 and g[-1] == 500 and set(range(31)) <= set(g.tolist())
    assert len(g) <= 31 + 50 + 1 and np.all(np.diff(g) > 0)
    assert curves.compact_iteration_grid(12).tolist() == list(range(13))


def test_time_ecdf_is_over_supported_finite_times(tmp_path):
    run = results.load(synth.make_run(tmp_path / "r", problems=10))
    e = curves.time_ecdf(run.solves)
    s = run.solves
    for (fam, spec), t in e.items():
        part = s[(s["family"] == fam) & (s["solver"] == spec)]
        want = np.sort(part[figures.attempted_mask(part)]["time_us"].to_numpy())
        np.testing.assert_array_equal(t, want)
    assert ("planar-pose", "two-bone") not in e  # unsupported everywhere: no ECDF
    ok = curves.time_ecdf(run.solves, successes_only=True)
    for key, t in ok.items():
        assert len(t) <= len(e[key])


def test_dof_sweeps_equal_summarize_per_solver_and_dof(tmp_path):
    run = results.load(synth.make_run(tmp_path / "r", problems=10))
    s = run.solves.copy()
    # relabel: planar-position as a 2-DOF family, planar-pose as a "3-DOF" one of the same sweep
    s["family"] = s["family"].map({"planar-position": "chain2-x", "planar-pose": "chain3-x"})
    s.loc[s["family"] == "chain3-x", "dof"] = 3
    d = curves.dof_sweeps(s)
    assert set(d["sweep"]) == {"chainN-x"}
    want = figures.summarize(s, keys=("solver", "dof"), intervals=False)
    for r in d.itertuples():
        w = want[(want["solver"] == r.solver) & (want["dof"] == r.dof)].iloc[0]
        assert r.solves == w.solves and r.available == w.available
        if r.available:
            assert r.success_rate == w.success_rate and r.success_ci_low == w.success_ci_low
    two = d[d["solver"] == "two-bone"].set_index("dof")
    assert not two.loc[3, "available"]  # unsupported on the pose family: n/a, not 0 %
    assert curves.dof_sweeps(run.solves).empty  # one DOF value: no sweep
