"""Arguments beyond every range and files that are not files: an exception of the right type
whose message names the argument, never a cast error ("Unable to cast Python instance to C++
type"), a hang on a FIFO, an endless read of /dev/zero, or an abort of the process."""

import os
import resource
import subprocess
import sys

import numpy as np
import pytest

from pyb_helpers import ROBOTS, SOURCE_DIR, ik


@pytest.fixture(scope="module")
def ur5():
    return ik.Model.from_urdf(ROBOTS / "ur5.urdf")


@pytest.fixture(scope="module")
def goal():
    return ik.Goal.position("tool0", [0.3, 0.1, 0.4])


def test_integers_beyond_64_bits_name_the_argument(ur5, goal):
    with pytest.raises(ValueError, match=r"body: body index 9223372036854775808 is out of range: model 'ur5' "
                                         r"has bodies 0\.\.7"):
        ur5.fk(np.zeros(6), body=2**63)
    with pytest.raises(ValueError, match=r"body: body index -1180591620717411303424 is out of range"):
        ur5.fk(np.zeros(6), body=-2**70)
    with pytest.raises(ValueError, match=r"body: index 9223372036854775808 is out of range: expected a body index"):
        ik.Goal.position(2**63, [0, 0, 0])
    solver = ik.Solver("dls")
    with pytest.raises(ValueError, match=r"max_iterations: 100000000000000000000 is out of range: expected an "
                                         r"integer in \[1, 100000000\]"):
        solver.solve(ur5, goal, max_iterations=10**20)
    with pytest.raises(ValueError, match=r"stall_iterations: -9223372036854775809 is out of range: expected an "
                                         r"integer in \[0, 100000000\]"):
        solver.solve(ur5, goal, stall_iterations=-2**63 - 1)
    with pytest.raises(ValueError, match=r"position_tolerance: 10{23}\.\.\. \(401 characters\) is "
                                         r"out of range: too large for a double"):
        solver.solve(ur5, goal, position_tolerance=10**400)
    targets = ik.reachable_targets(ur5, 3, seed=1)
    with pytest.raises(ValueError, match=r"threads: 9223372036854775808 is out of range: expected 0 \(all cores\) "
                                         r"to 1024"):
        ik.solve_batch(ur5, "auto", targets, threads=2**63)
    with pytest.raises(TypeError, match=r"threads: expected an integer, got float"):
        ik.solve_batch(ur5, "auto", targets, threads=2.0)
    with pytest.raises(ValueError, match=r"count: 9223372036854775808 is out of range: expected an integer in "
                                         r"\[0, 100000000\]"):
        ik.reachable_targets(ur5, 2**63, seed=1)
    with pytest.raises(ValueError, match=r"joints: 18446744073709551616 is out of range: expected an integer in "
                                         r"\[1, 10000\]"):
        ik.random_chain(2**64, 1)
    # In range, the same calls work.
    assert ur5.fk(np.zeros(6), body=np.int64(7))[0].shape == (3,)
    assert ik.solve_batch(ur5, "auto", targets, threads=np.int32(1)).q.shape == (3, 6)


def test_files_that_are_not_regular_files_are_named_for_what_they_are(tmp_path):
    with pytest.raises(IsADirectoryError, match=r"path: '.*robots' is a directory, expected a file"):
        ik.Model.from_urdf(ROBOTS)
    fifo = tmp_path / "robot.urdf"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match=r"path: '.*robot\.urdf' is a FIFO, not a regular file"):
        ik.Model.from_urdf(fifo)  # never opened: opening a FIFO blocks until a writer comes
    with pytest.raises(OSError, match=r"path: '/dev/zero' is a character device, not a regular file"):
        ik.Model.from_urdf("/dev/zero")
    os.symlink("/dev/zero", tmp_path / "clip.bvh")
    with pytest.raises(OSError, match=r"clip\.bvh' is a character device, not a regular file"):
        ik.Model.from_bvh(tmp_path / "clip.bvh")
    with pytest.raises(FileNotFoundError, match=r"path: no such file: '.*nothing\.urdf'"):
        ik.Model.from_urdf(tmp_path / "nothing.urdf")


def test_an_array_too_large_to_convert_is_a_memory_error(ur5):
    # A broadcast view costs nothing; its float64 copy would be 56 TB.
    huge = np.broadcast_to(np.zeros(7, dtype=np.float32), (10**12, 7))
    with pytest.raises(MemoryError, match=r"targets: cannot allocate the float64 copy of an array of shape "
                                          r"\(1000000000000, 7\) \(56000000000000 bytes\)"):
        ik.solve_batch(ur5, "auto", huge)
    # Non-numeric data stays a TypeError.
    with pytest.raises(TypeError, match=r"targets: expected real numbers"):
        ik.solve_batch(ur5, "auto", np.array([["a"] * 7]))


_THREADS = r"""
import numpy as np, ikbench as ik
ur5 = ik.Model.from_urdf(ROBOT)
targets = ik.reachable_targets(ur5, 2000, seed=1)
for simd in (True, False):
    try:
        ik.solve_batch(ur5, "dls", targets, threads=1000, simd=simd)
        print("started", simd)
    except OSError as e:
        print(type(e).__name__, simd, e)
r = ik.solve_batch(ur5, "dls", targets[:50], threads=2)
print("after", int(r.converged.sum()))
"""


def test_threads_that_cannot_start_are_an_os_error_not_an_abort():
    """1000 threads under a limit that leaves room for a few (1 GiB stacks in 12 GiB of address
    space): solve_batch raises OSError naming the count, on the SIMD path (ikbench::solveBatch)
    and on the one-problem path, and the process goes on solving."""
    def limits():
        resource.setrlimit(resource.RLIMIT_STACK, (1 << 30, resource.RLIM_INFINITY))
        resource.setrlimit(resource.RLIMIT_AS, (12 << 30, resource.RLIM_INFINITY))

    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    code = _THREADS.replace("ROBOT", repr(str(ROBOTS / "ur5.urdf")))
    p = subprocess.run([sys.executable, "-c", code], preexec_fn=limits, capture_output=True, text=True, env=env,
                       timeout=300, cwd=SOURCE_DIR)
    assert p.returncode == 0, f"exit {p.returncode}: {p.stdout}{p.stderr}"
    out = p.stdout.splitlines()
    if any(line.startswith("started") for line in out):
        pytest.skip("1000 threads started under the limits here: the failure cannot be provoked")
    for simd, line in zip((True, False), out):
        assert line.startswith(f"OSError {simd} solve_batch: cannot start 1000 threads: Resource temporarily "
                               "unavailable (threads=1000: ask for fewer, or 0 for one per core)"), line
    assert out[2].startswith("after ") and int(out[2].split()[1]) > 0
