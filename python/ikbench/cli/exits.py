"""The exit statuses of every command of `python3 -m ikbench` (and scripts/regress.py): one set.

    0  done, nothing found (no regression, every solve agrees, the docs are current)
    1  a finding: a regression, a disagreement, no point meeting a criterion, a stale document
    2  bad input, with a one-line message naming the file, line or option on stderr
"""

import enum


class Exit(enum.IntEnum):
    OK = 0
    FINDING = 1
    BAD_INPUT = 2


EXIT_OK, EXIT_FINDING, EXIT_BAD_INPUT = Exit.OK, Exit.FINDING, Exit.BAD_INPUT
EXIT_REGRESSION = Exit.FINDING   # the gate's finding
