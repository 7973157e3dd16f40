#!/usr/bin/python3
"""A damped-least-squares IK solver in NumPy, benchmarked by ikbench as an external solver.

    ikbench run --urdf scenarios/data/robots/ur5.urdf \
        --solvers "auto,ext:cmd='/usr/bin/python3 examples/external/dls_solver.py'"

The method is Buss 2004's damped least squares: dq = J^T (J J^T + lambda^2 I)^-1 e, with the step
clamped to MAX_STEP and q clamped into the joint limits after each step; it ends when the harness's
tolerances hold, after max_iterations steps, or when the time budget is spent. Ball and free joints
are answered `unsupported` (the adapter's Jacobian covers revolute and prismatic joints).
"""
import sys
import time
from pathlib import Path

import numpy as np

# ikbench.external from this checkout (it imports only the standard library and numpy).
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
from ikbench import external  # noqa: E402

LAMBDA = 0.05   # damping [m]
MAX_STEP = 0.5  # largest joint step per iteration (tangent norm)


@external.solver(name="numpy-dls")
def solve(model, problem):
    if not model.simple:
        return external.Answer(problem.q0, "unsupported", 0, "ball and free joints are not handled")
    q = model.clamp(problem.q0)
    deadline = time.perf_counter() + problem.time_budget_us * 1e-6 if problem.time_budget_us > 0 else None
    for it in range(problem.max_iterations + 1):
        if problem.within_tolerance(model, q):
            return external.Answer(q, "converged", it)
        if it == problem.max_iterations:
            break
        if deadline is not None and time.perf_counter() > deadline:
            return external.Answer(q, "time-limit", it)
        e, jac = model.residual_and_jacobian(q, problem.goals)
        dq = jac.T @ np.linalg.solve(jac @ jac.T + LAMBDA ** 2 * np.eye(len(e)), e)
        norm = np.linalg.norm(dq)
        if norm > MAX_STEP:
            dq *= MAX_STEP / norm
        q = model.clamp(q + dq)  # revolute and prismatic only: nq == nv
    return external.Answer(q, "max-iterations", problem.max_iterations)


if __name__ == "__main__":
    solve.serve()
