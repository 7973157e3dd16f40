"""`ikbench history publish DIR`: a static site of the whole store, as asv publish writes one.

    DIR/index.html               every series: latest value with its interval, last change point, sparkline; filterable
    DIR/spec/<name>.html         one solver spec (or one Google Benchmark file, or throughput): its series' trend plots
    DIR/machine/<key>.html       one machine identity: its runs and its series that stepped
    DIR/changes.html             every change point, most recent first
    DIR/plotly.min.js            the one script the plots need (from python3-plotly: no network)
    DIR/series.json              the data behind the pages (every series, per commit, with change points)

Computed first (`site_data`: plain data, from ikbench.analysis.series: time series at the median
speed of their runs unless `raw`, noisy runs left out unless `include_noisy`), then rendered by
the jinja2 templates of render/templates/. Every file is written by the output rule
(ikbench.io.safe_io), never over the store the site is drawn from.
"""

import hashlib
import json
import math
import re

import numpy as np

from ..io.safe_io import atomic_write_text, output_directory
from ..io import store_queries as queries
from ..analysis import series as series_mod
from . import templates
from .history_plots import sparkline_svg
from .history_text import excluded_text, not_enough_text, step_text



def _num(v):
    if v is None:
        return None
    v = float(v)
    return v if math.isfinite(v) else None


def slug(text):
    base = re.sub(r"[^A-Za-z0-9._=-]+", "_", text).strip("_")[:60] or "x"
    return f"{base}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"


def page_of(key):
    """The spec page a series belongs to: its solver spec, or its Google Benchmark file, or throughput."""
    source, family, solver = key[0], key[1], key[2]
    return solver if source == "cell" else family


def _value_text(v, fig):
    if v is None:
        return ""
    if fig == "success_rate":
        return f"{100 * v:.1f} %"
    return f"{v:.4g}"


def site_data(store, alpha=None, figures=None, raw=False, include_noisy=False):
    """Every series of the store (figures: queries.CHANGE_FIGURES) with its points per commit and
    change points, the machines and their runs: plain data for the templates and series.json."""
    from ..analysis.changepoints import ALPHA

    alpha = ALPHA if alpha is None else alpha
    pts = queries.points(store, figures=figures or queries.CHANGE_FIGURES)
    series = []
    left_out = {}
    for an in series_mod.series_of(store, pts, alpha=alpha, raw=raw, include_noisy=include_noisy):
        key, pc, clean = an.key, an.pc, an.clean
        for e in an.excluded:
            left_out[e["run_id"]] = e
        if pc.empty:
            continue
        dirty = pc["dirty"].fillna(False).astype(bool).to_numpy()
        pos = {c: i for i, c in enumerate(pc["commit"])}
        changes = []
        for c in an.changes:
            commit = clean["commit"].iloc[c.index]
            changes.append({"index": pos[commit], "commit": commit, "date": (clean["commit_date"].iloc[c.index] or ""),
                            "step": _num(c.step), "low": _num(c.step_low), "high": _num(c.step_high),
                            "scale": c.scale, "p": c.p_value, "text": step_text(c.step, c.step_low, c.step_high,
                                                                                c.scale),
                            "regression": series_mod.is_regression(key[3], c.step)})
        last = pc.iloc[-1]
        s = {"id": slug(json.dumps([str(k) for k in key])), "source": key[0], "family": key[1], "solver": key[2],
             "figure": key[3], "machine": key[4], "suite": key[5], "threads": int(key[6]),
             "machine_label": pc["machine_label"].iloc[0], "page": slug(page_of(key)), "page_name": page_of(key),
             "commits": list(pc["commit"]), "dates": [(d or "")[:10] for d in pc["commit_date"].fillna("")],
             "subjects": [(x or "")[:80] for x in pc["subject"].fillna("")],
             "values": [_num(v) for v in pc["value"]], "low": [_num(v) for v in pc["ci_low"]],
             "high": [_num(v) for v in pc["ci_high"]], "runs": [int(v) for v in pc["runs"]],
             "dirty": [bool(x) for x in dirty], "changes": changes, "normalised": an.normalised,
             "verdict": None if an.enough else not_enough_text(an.commits, an.need),
             "excluded": [{"run": e["run_id"], "commit": e["commit"], "reason": e["reason"]} for e in an.excluded],
             "latest": _num(last["value"]), "latest_low": _num(last["ci_low"]), "latest_high": _num(last["ci_high"]),
             "latest_commit": last["commit"]}
        s["latest_text"] = _value_text(s["latest"], key[3])
        s["last_change"] = changes[-1] if changes else None
        s["spark"] = sparkline_svg(np.array([np.nan if v is None else v for v in s["values"]]),
                                   [c["index"] for c in changes],
                                   ci=(np.array([np.nan if v is None else v for v in s["low"]]),
                                       np.array([np.nan if v is None else v for v in s["high"]])))
        series.append(s)
    runs = queries.runs(store)
    machines = []
    for m in queries.machines(store).itertuples():
        mr = runs[runs["machine"] == m.key]
        machines.append({"key": m.key, "label": m.label, "page": slug(m.key), "runs": [
            {"id": int(r.run_id), "commit": queries.commit_label(r.git_commit, r.dirty),
             "date": (r.commit_date or r.start_time or "")[:19], "subject": (r.subject or "")[:80], "suite": r.suite,
             "threads": r.threads, "noisy": bool(r.noisy) if r.noisy is not None else None}
            for r in mr.itertuples()]})
    skipped = queries.skipped(store, with_dates=True)
    noisy = sorted(left_out.values(), key=lambda e: e["run_id"])
    return {"series": series, "machines": machines, "skipped": skipped, "alpha": alpha, "store": store.name,
            "runs": len(runs), "noisy": noisy, "noisy_text": excluded_text(noisy, limit=50), "raw": raw}


def _env():
    return templates.environment()


def publish(store, out_dir, alpha=None, raw=False, include_noisy=False, inputs=()):
    """Writes the site; returns the path of its index.html. `inputs`: files no page may replace
    (besides the store's own)."""
    from plotly.offline import get_plotlyjs

    inputs = list(inputs) + list(store.inputs)
    out = output_directory(out_dir, inputs=inputs)   # refused before the work
    data = site_data(store, alpha, raw=raw, include_noisy=include_noisy)
    for sub in ("spec", "machine"):
        output_directory(out / sub, inputs=inputs)

    def _write(path, text):
        atomic_write_text(path, text, inputs=inputs)

    env = _env()
    series = data["series"]
    pages = {}
    for s in series:
        pages.setdefault(s["page"], {"name": s["page_name"], "series": []})["series"].append(s)
    all_changes = sorted(([s, c] for s in series for c in s["changes"]), key=lambda sc: (sc[1]["date"], -sc[1]["p"]),
                         reverse=True)
    common = {"store": data["store"], "runs": data["runs"], "alpha": data["alpha"], "machines": data["machines"],
              "noisy_text": data["noisy_text"], "raw": data["raw"],
              "pages": sorted(({"page": k, "name": v["name"], "n": len(v["series"])} for k, v in pages.items()),
                              key=lambda p: p["name"])}
    light = [{k: v for k, v in s.items() if k != "spark"} for s in series]
    _write(out / "index.html", env.get_template("index.html.j2").render(
        series=series, figures=sorted({s["figure"] for s in series}), root="", changes=all_changes[:30],
        skipped=data["skipped"], **common))
    _write(out / "changes.html", env.get_template("changes.html.j2").render(changes=all_changes, root="", **common))
    for key, page in pages.items():
        page_series = [x for x in light if x["page"] == key]
        _write(out / "spec" / f"{key}.html", env.get_template("spec.html.j2").render(
            name=page["name"], series=page_series, figures=sorted({s["figure"] for s in page_series}),
            families=sorted({s["family"] for s in page_series}), root="../", **common))
    for m in data["machines"]:
        ms = [s for s in series if s["machine"] == m["key"]]
        stepped = sorted((sc for sc in all_changes if sc[0]["machine"] == m["key"]), key=lambda sc: sc[1]["date"],
                         reverse=True)
        _write(out / "machine" / f"{m['page']}.html", env.get_template("machine.html.j2").render(
            machine=m, n_series=len(ms), changes=stepped, root="../", **common))
    _write(out / "plotly.min.js", get_plotlyjs())
    _write(out / "series.json", json.dumps({"series": light, "machines": data["machines"], "skipped": data["skipped"],
                                            "noisy": data["noisy"]}, separators=(",", ":")) + "\n")
    return out / "index.html"
