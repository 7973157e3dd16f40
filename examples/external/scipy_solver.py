#!/usr/bin/python3
"""SciPy's bounded nonlinear least squares as an IK solver, benchmarked by ikbench as an external
solver (a library from Debian's archive, python3-scipy, through the Python adapter).

    ikbench run --urdf scenarios/data/robots/ur5.urdf \
        --solvers "auto,ext:cmd='/usr/bin/python3 examples/external/scipy_solver.py'"

The problem is the pose residual the harness verifies: for each goal the position error
(target - point) and the orientation error log(R_target R^T) (a rotation vector), weighted as
the goal says, stacked into e(q); the solver minimises |e(q)|^2 / 2 with
scipy.optimize.least_squares, method "trf" (the Trust Region Reflective method of Branch, Coleman
and Li 1999, which keeps q inside the joint limits as box bounds), with the analytic Jacobian
de/dq = -J of the adapter's kinematics. One attempt from the start configuration, at most
max_iterations evaluations of e; the answer is `converged` only when the harness's tolerances
hold. Ball and free joints are answered `unsupported` (the adapter's Jacobian covers revolute and
prismatic joints).
"""
import sys
import warnings
from pathlib import Path

import numpy as np
from scipy.optimize import least_squares

# ikbench.external from this checkout (it imports only the standard library and numpy).
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
from ikbench import external  # noqa: E402

# least_squares' own stopping tests, tight enough that the harness's tolerances (1e-5 and finer)
# decide: the solve ends on them or on the evaluation cap.
TOLERANCE = 1e-12


@external.solver(name="scipy-least-squares")
def solve(model, problem):
    if not model.simple:
        return external.Answer(problem.q0, "unsupported", 0, "ball and free joints are not handled")
    # Revolute and prismatic joints only: nq == nv, and the limits are the q bounds.
    lower, upper = model.lower.copy(), model.upper.copy()
    q0 = model.clamp(problem.q0)
    # "trf" needs lower < upper: a joint whose limits coincide (a locked joint) stays at its value.
    locked = ~(lower < upper)
    free = ~locked

    def full(x):
        q = q0.copy()
        q[free] = x
        return q

    def residual(x):
        return model.residual_and_jacobian(full(x), problem.goals)[0]

    def jacobian(x):
        return -model.residual_and_jacobian(full(x), problem.goals)[1][:, free]

    if not free.any() or problem.within_tolerance(model, q0):
        status = "converged" if problem.within_tolerance(model, q0) else "stalled"
        return external.Answer(q0, status, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an ill-conditioned step is the answer's verdict, not stderr noise
        result = least_squares(residual, q0[free], jac=jacobian, bounds=(lower[free], upper[free]), method="trf",
                               xtol=TOLERANCE, ftol=TOLERANCE, gtol=TOLERANCE,
                               max_nfev=max(1, problem.max_iterations))
    q = model.clamp(full(result.x))
    if problem.within_tolerance(model, q):
        status = "converged"
    elif result.status == 0:
        status = "max-iterations"
    else:
        status = "stalled"  # least_squares stopped on its own tests short of the tolerances
    return external.Answer(q, status, int(result.nfev), result.message if status != "converged" else None)


if __name__ == "__main__":
    solve.serve()
