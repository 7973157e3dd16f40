"""The Python bindings in the differential suite of the damped least-squares method
(tests/differential_test.cpp): on the same seeded targets of the shipped arms,

  kernel       Solver.solve with the spec (the compiled chain kernel, kernel=auto),
  batch        solve_batch with simd=True (the SIMD lanes),
  batch-rows   solve_batch with simd=False (one Solver.solve per row),

are held to Solver.solve on the generic model code (kernel=generic) with the suite's one set of
thresholds, its `Agreement` struct, read from the C++ source so that both languages use the same
numbers; the three run the same arithmetic and agree bitwise; every converged answer holds by the
independent numpy FK, within the limits."""

import pathlib
import re

import numpy as np
import pytest

from pyb_helpers import ARMS, arm, ik, pose_errors

TOL = 1e-5
SPECS = [
    "dls-adaptive:restarts=200:mode=error:err_gain=0.03:limits=freeze:max_step=1:max_iterations=20",
    "auto:time_budget_us=0:closed_form=off",
    "dls",
    "dls-adaptive:mode=error:limits=freeze:restarts=5",
]
SUITE = pathlib.Path(__file__).resolve().parents[1] / "differential_test.cpp"


def agreement():
    """The fields of `struct Agreement` in tests/differential_test.cpp, by name."""
    text = SUITE.read_text()
    body = re.search(r"struct Agreement \{(.*?)\n\};", text, re.S)
    assert body, f"no struct Agreement in {SUITE}"
    fields = {name: float(value) for name, value in re.findall(r"double (\w+) = ([0-9.eE+-]+);", body.group(1))}
    expected = {"same_outcome", "same_iterations", "max_dq", "converged_shortfall", "reported_error"}
    assert set(fields) == expected, f"Agreement's fields changed: {sorted(fields)}; update this test"
    return fields


AGREE = agreement()


def solve_each(solver, model, tip, targets, seeds):
    return [solver.solve(model, ik.Goal.pose(tip, t[:3], t[3:]), seed=int(s)) for t, s in zip(targets, seeds)]


def check_by_fk(model, chain, q, status, targets, where):
    lower, upper = model.limits
    for i, st in enumerate(status):
        if st != "converged":
            continue
        pos, ang = pose_errors(chain, q[i], targets[i])
        assert pos <= TOL * (1 + 1e-9) and ang <= TOL * (1 + 1e-9), (where, i, pos, ang)
        assert np.all(q[i] >= lower - 1e-9) and np.all(q[i] <= upper + 1e-9), (where, i)


@pytest.mark.parametrize("spec", SPECS)
def test_the_bindings_agree_with_the_generic_code(spec):
    same_iterations = n_total = 0
    for name in sorted(ARMS):
        model, chain, tip = arm(name)
        targets = ik.reachable_targets(model, 40, seed=17)
        n = len(targets)
        batch = ik.solve_batch(model, spec, targets, threads=2, seed=5)
        assert batch.batched == n, f"{name}: the SIMD kernel took {batch.batched} of {n}"
        rows = ik.solve_batch(model, spec, targets, threads=2, seed=5, simd=False)
        assert rows.batched == 0
        seeds = batch.seeds
        kernel = solve_each(ik.Solver(spec), model, tip, targets, seeds)
        generic = solve_each(ik.Solver(spec + ":kernel=generic"), model, tip, targets, seeds)

        # Same arithmetic: bitwise the same answers and counts.
        for i, s in enumerate(kernel):
            for other, what in ((batch, "batch"), (rows, "batch-rows")):
                np.testing.assert_array_equal(s.q, other.q[i], err_msg=f"{spec} {name} {what} row {i}")
                assert (s.status, s.iterations, s.restarts) == (
                    other.status_text[i], other.iterations[i], other.restarts[i]), (spec, name, what, i)

        # Against the generic code, within the suite's thresholds.
        q = np.array([s.q for s in kernel])
        status = [s.status for s in kernel]
        check_by_fk(model, chain, q, status, targets, f"{spec} {name} kernel")
        check_by_fk(model, chain, np.array([s.q for s in generic]), [s.status for s in generic], targets,
                    f"{spec} {name} generic")
        same_outcome = sum(k.status == g.status and k.restarts == g.restarts for k, g in zip(kernel, generic))
        same_iter = [k.iterations == g.iterations for k, g in zip(kernel, generic)]
        max_dq = max((np.max(np.abs(k.q - g.q)) for k, g, same in zip(kernel, generic, same_iter) if same),
                     default=0.0)
        converged = sum(k.converged for k in kernel)
        converged_ref = sum(g.converged for g in generic)
        print(f"{spec} | {name}: outcome {same_outcome}/{n}, iterations {sum(same_iter)}/{n}, "
              f"converged {converged} (generic {converged_ref}), max |dq| {max_dq:.2g}")
        assert same_outcome >= AGREE["same_outcome"] * n, (spec, name, same_outcome)
        assert max_dq < AGREE["max_dq"], (spec, name, max_dq)
        assert converged >= converged_ref - AGREE["converged_shortfall"] * n, (spec, name, converged, converged_ref)
        same_iterations += sum(same_iter)
        n_total += n
    assert same_iterations >= AGREE["same_iterations"] * n_total, (spec, same_iterations, n_total)

