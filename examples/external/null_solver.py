#!/usr/bin/python3
"""The null solver: answers every problem with its start configuration, at once.

Its wall time per problem in an ikbench run is the cost of the external-solver protocol itself
(writing the problem, the Python adapter reading and answering it, reading the answer), the
overhead any external solver pays on top of its own time:

    ikbench run --chain 6 --samples 200 --solvers "ext:cmd='/usr/bin/python3 examples/external/null_solver.py'"
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
from ikbench import external  # noqa: E402


@external.solver(name="null")
def solve(model, problem):
    return external.Answer(problem.q0, "max-iterations", 0)


if __name__ == "__main__":
    solve.serve()
