"""Fixtures of the binding tests (helpers in pyb_helpers.py)."""

import pytest

from pyb_helpers import corpus_dir


@pytest.fixture(scope="session")
def corpus():
    d = corpus_dir()
    if d is None:
        pytest.skip("real robot data not found: set IKBENCH_CORPUS_DIR to the directory with robots/ and skeletons/")
    return d
