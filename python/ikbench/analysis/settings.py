"""The settings a solver spec ran under, as run.json records them: what every table that states a
setting shows (report.html's per-solver table, the sweeps across runs).

run.json's `solvers[].parameters` holds every parameter of a spec, defaults filled in, except the
common keys a spec may leave to the run (`max_iterations`, `time_budget_us`, `stall_iterations`,
`stall_relative_improvement`): those are null there when the spec does not set them, and the
solve then runs under the run's value, `suite.options` (solvers/include/ikbench/solvers/
solver_spec.h, `withSpecOptions`). The tolerances that decide convergence are the run's for every
spec (`suite.options.position_tolerance_m`, `orientation_tolerance_rad`).

    for s in settings_in_force(run, "dls"):
        print(s.key, s.text, s.source)    # max_iterations 300 suite option ...
"""

import math
from dataclasses import dataclass

from ..io.specs import spec_records

# The common keys whose null in solvers[].parameters means "the run's setting", and their name in
# suite.options (the same names).
FROM_RUN = ("max_iterations", "time_budget_us", "stall_iterations", "stall_relative_improvement")
# The run's options every spec runs under, listed after the spec's own parameters.
RUN_WIDE = ("position_tolerance_m", "orientation_tolerance_rad")

SOURCE_SPEC = "spec"              # the spec's value (given, set by its preset, or the backend's default)
SOURCE_RUN = "suite option"       # not set by the spec: run.json suite.options
SOURCE_MISSING = "not recorded"   # neither the spec nor run.json's suite.options has it

# What a zero means, where it switches something off.
_ZERO_MEANS = {"time_budget_us": "no budget", "stall_iterations": "no stall rule"}


@dataclass(frozen=True)
class Setting:
    key: str
    value: object    # the value in force (None when not recorded)
    source: str      # SOURCE_SPEC, SOURCE_RUN or SOURCE_MISSING
    text: str        # the value as a table shows it


def suite_options(run):
    """run.json's suite.options as a dict (empty when the run has none)."""
    suite = run.meta.get("suite") if isinstance(run.meta, dict) else None
    opts = suite.get("options") if isinstance(suite, dict) else None
    return dict(opts) if isinstance(opts, dict) else {}


def spec_parameters(run):
    """{spec: run.json's solvers[].parameters (a dict)} of every spec run.json lists
    (ikbench.io.specs)."""
    return {spec: dict(r.parameters) for spec, r in spec_records(run.meta).items()}


def value_text(key, value):
    """A setting's value as text: numbers as written (integral floats without '.0'), a zero that
    switches something off says so ('0 (no budget)'), None as 'not recorded'."""
    if value is None:
        return SOURCE_MISSING
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        text = f"{value:.0f}" if value.is_integer() and abs(value) < 1e15 else f"{value:g}"
    else:
        text = str(value)
    if isinstance(value, (int, float)) and value == 0 and _ZERO_MEANS.get(key):
        text += f" ({_ZERO_MEANS[key]})"
    return text


def settings_in_force(run, spec, params=None):
    """[Setting] of a spec of the run: each of its run.json parameters with the value it ran under
    (a common key the spec leaves null: the run's suite option), then the run-wide tolerances.
    `params`: spec_parameters(run), when already computed."""
    params = spec_parameters(run) if params is None else params
    opts = suite_options(run)
    out = []
    for key, value in params.get(spec, {}).items():
        if value is None and key in FROM_RUN:
            value = opts.get(key)
            source = SOURCE_RUN if value is not None else SOURCE_MISSING
        else:
            source = SOURCE_SPEC if value is not None else SOURCE_MISSING
        out.append(Setting(key, value, source, value_text(key, value)))
    for key in RUN_WIDE:
        value = opts.get(key)
        out.append(Setting(key, value, SOURCE_RUN if value is not None else SOURCE_MISSING, value_text(key, value)))
    return out


def parameters_in_force(run, spec, params=None):
    """{key: value in force} of a spec's run.json parameters (settings_in_force without the
    run-wide tolerances)."""
    n = len(RUN_WIDE)
    return {s.key: s.value for s in settings_in_force(run, spec, params)[:-n]}
