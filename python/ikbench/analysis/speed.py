"""A run's speed relative to other runs of the same build or of nearby commits: how much the
machine, not the code, made it slower or faster.

    factors = speed_factors({run: {cell: time}})                  # relative to each cell's median across runs
    factors = speed_factors({run: {cell: time}}, reference=first)  # relative to one run (the gate's repeats)

A run's factor is the median over its cells of the cell's time divided by the cell's reference
time: the cell's median over all runs given (default) or the reference run's time. Load on a
shared machine slows a whole run (every cell alike), while a change of the code moves the cells
it touches: the median over cells follows the machine and leaves a change of a few cells out, so
dividing each cell's time by its run's factor takes the machine's speed out of a comparison of
runs. A change that moves most cells alike is taken for the machine's speed too: compare raw times
(on a quiet machine) to see it.

The regression gate combines repeats of one build with it (ikbench.analysis.gate_data, relative to the first
repeat), and the history store normalises series across commits and the gate's history window with
it (ikbench.analysis.series, ikbench.analysis.history_gate: relative to each cell's median).
"""

import math

from .timeunit import MEDIAN_RATIO_MIN_CELLS, median

MIN_CELLS = MEDIAN_RATIO_MIN_CELLS   # cells with a time in both the run and the reference for a factor


def speed_factors(times, reference=None, min_cells=1):
    """{run: factor} of `times` ({run: {cell: time}}, times > 0; None, nan and values <= 0 are left
    out). `reference`: None (each cell's median over the runs that have it) or a run of `times`.
    A run with fewer than `min_cells` cells that have both a time and a reference time gets None."""
    def ok(v):
        return v is not None and isinstance(v, (int, float)) and math.isfinite(v) and v > 0

    if reference is None:
        per_cell = {}
        for cells in times.values():
            for c, v in cells.items():
                if ok(v):
                    per_cell.setdefault(c, []).append(float(v))
        ref = {c: median(v) for c, v in per_cell.items()}
    else:
        ref = {c: float(v) for c, v in times[reference].items() if ok(v)}
    out = {}
    for run, cells in times.items():
        ratios = [float(v) / ref[c] for c, v in cells.items() if ok(v) and c in ref]
        out[run] = median(ratios) if ratios and len(ratios) >= min_cells else None
    return out


__all__ = ["MIN_CELLS", "speed_factors"]
