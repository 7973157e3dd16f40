"""Words for the history's analyses, shared by the command line, the site and the report section."""

import math


def step_text(step, low, high, scale):
    """'+10.2 % [+6.1, +14.0]' (log scale), '-10.0 pts [-13.0, -7.0]' (a proportion), else a difference."""
    def f(v, pct):
        if v is None or not math.isfinite(v):
            return "?"
        return f"{100 * v:+.1f}" if pct else f"{v:+.3g}"
    if scale == "log":
        return f"{f(step, True)} % [{f(low, True)}, {f(high, True)}]"
    if scale == "proportion":
        return f"{f(step, True)} pts [{f(low, True)}, {f(high, True)}]"
    return f"{f(step, False)} [{f(low, False)}, {f(high, False)}]"


def not_enough_text(commits, need):
    """The verdict of a series too short to have one."""
    if need is None:
        return f"not enough commits ({commits}; no number of commits reaches this significance level)"
    return f"not enough commits ({commits}, need {need})"


def excluded_text(excluded, limit=8):
    """'left out as noisy (--include-noisy keeps them): 1a2b3c4d5e (run 7: load average 7.9 on 2 cores), ...'."""
    if not excluded:
        return ""
    items = [f"{e['commit']} (run {e['run_id']}: {e['reason']})" for e in excluded[:limit]]
    more = f", and {len(excluded) - limit} more" if len(excluded) > limit else ""
    return f"left out as noisy ({len(excluded)} runs; --include-noisy keeps them): " + ", ".join(items) + more


def normalised_text(normalised, figure):
    if normalised:
        return f"{figure} at the median speed of its runs (each run's speed factor taken out; --raw: as measured)"
    return f"{figure} as measured"


__all__ = ["step_text", "not_enough_text", "excluded_text", "normalised_text"]
