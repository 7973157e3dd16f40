"""Computing: figures, statistics, outcomes, verify (the numpy cross-check), the gate, compare,
tune, sweep, coverage, curves, change points and history series. Returns data (dataclasses and
typed values); imports only ikbench.io below it."""
