"""report.html's history section (`ikbench report RUN --history DB`, docs/history.md).

Beside each headline cell of the report (the tied leaders of every family and the reference peer),
its trend across commits on the run's machine identity, suite and thread count: sparklines of the
success rate and the median time with the change points marked, the latest value and the last
change point; then the series of that machine that stepped most recently. The section is computed
from the store (ikbench.analysis.series: median times at the median speed of their runs, noisy runs
left out) and written as static HTML into the page after it is built: inline SVG, no script,
nothing loaded from outside. DB may be a store or a json export (read only); the page is written
by the output rule, never over the store (`check_output`, before the report's work).
"""

import html

from ..io.safe_io import atomic_write_text, check_output_path
from ..io import store_queries as queries
from ..analysis import record
from ..analysis import series as series_mod
from ..io.store_open import open_history
from .history_plots import sparkline_svg
from ..io.store import is_postgresql
from .history_text import excluded_text, not_enough_text, step_text

RECENT = 12   # stepped series listed


def store_files(db):
    """The files a store named DB is read from (none for PostgreSQL)."""
    return [] if is_postgresql(db) or str(db) == ":memory:" else [str(db)]


def check_output(db, out):
    """Refuses a report page at `out` that would replace the store DB (or a device, a FIFO: the
    output rule), before any work."""
    check_output_path(out, inputs=store_files(db))


def _series(pts, speeds, family, solver, figure):
    g = pts[(pts["family"] == family) & (pts["solver"] == solver) & (pts["figure"] == figure)]
    if g.empty:
        return None
    key = tuple(g.iloc[0][queries.SERIES_KEY])
    s = series_mod.analyse(key, g, speeds)
    if s.pc.empty:
        return None
    pos = {c: i for i, c in enumerate(s.pc["commit"])}
    return s, [(pos[s.change_commit(c)], c) for c in s.changes]


def section_data(db, run, heads):
    """Rows per headline cell and the recent change points of the run's machine (plain data)."""
    ident = record.machine_identity(run.meta)
    with open_history(db) as store:
        known = queries.machines(store)
        if ident["key"] not in set(known["key"]):
            return {"store": store.name, "machine": ident, "rows": [], "changes": [], "known": False}
        pts = queries.points(store, machine_key=ident["key"], suite=run.suite, source="cell",
                             figures=["success_rate", "time_us_median"])
        pts = pts[pts["threads"] == (run.threads or 0)]
        speeds = series_mod.Speeds.load(store, machine_key=ident["key"], suite=run.suite)
        found = series_mod.find_changes(store, machine_key=ident["key"], suite=run.suite)
        ch = found.table
        name = store.name
    rows = []
    for h in heads:
        cells = [("leader", c) for c in h.get("leaders") or []]
        if h.get("peer") and all(h["peer"]["solver"] != c["solver"] for _, c in cells):
            cells.append(("peer", h["peer"]))
        for role, c in cells:
            row = {"family": h["family"], "solver": c["solver"], "role": role}
            for fig in ("success_rate", "time_us_median"):
                got = _series(pts, speeds, h["family"], c["solver"], fig)
                if got is None:
                    row[fig] = None
                    continue
                s, cps = got
                pc = s.pc
                last = cps[-1][1] if cps else None
                row[fig] = {"svg": sparkline_svg(pc["value"].to_numpy(float), [i for i, _ in cps],
                                                 ci=(pc["ci_low"].to_numpy(float), pc["ci_high"].to_numpy(float))),
                            "points": len(pc), "latest": float(pc["value"].iloc[-1]),
                            "verdict": None if s.enough else not_enough_text(s.commits, s.need),
                            "last_change": None if last is None else {
                                "commit": pc["commit"].iloc[cps[-1][0]],
                                "text": step_text(last.step, last.step_low, last.step_high, last.scale),
                                "regression": series_mod.is_regression(fig, last.step)}}
            rows.append(row)
    changes = [] if ch.empty else ch[ch["threads"] == (run.threads or 0)].head(RECENT).to_dict("records")
    ex = found.excluded
    noisy = [] if ex.empty else ex.drop_duplicates("run_id").to_dict("records")
    return {"store": name, "machine": ident, "rows": rows, "changes": changes, "known": True,
            "noisy": excluded_text(noisy)}


def _cell(fig):
    if fig is None:
        return '<td class="hist-none">no history</td>'
    lc = fig["last_change"]
    step = "" if lc is None else (f'<br><span class="{"worse" if lc["regression"] else "better"}">'
                                  f'{html.escape(lc["text"])}</span> at {html.escape(lc["commit"])}')
    if lc is None and fig.get("verdict"):
        step = f"<br>{html.escape(fig['verdict'])}"
    return f'<td>{fig["svg"]} <small>{fig["points"]} commits{step}</small></td>'


def section_html(d):
    e = html.escape
    out = ['<section id="history" class="ikbench-history"><h2>History</h2>',
           f'<p>Trends across commits from {e(d["store"])}, machine {e(d["machine"]["key"])} '
           f'({e(d["machine"]["label"])}): the run\'s suite and thread count, runs of clean work trees, median '
           'times at the median speed of their runs; change points (red) by E-Divisive means and, for success, '
           'Fisher\'s exact test (docs/history.md).</p>']
    if d.get("noisy"):
        out.append(f'<p><small>{e(d["noisy"])}</small></p>')
    if not d["known"]:
        out.append("<p>No run of this machine identity is in the store yet.</p></section>")
        return "".join(out)
    out.append('<table class="hist"><tr><th>family</th><th>spec</th><th></th><th>success rate</th>'
               '<th>median time [us]</th></tr>')
    for r in d["rows"]:
        out.append(f'<tr><td>{e(r["family"])}</td><td>{e(r["solver"])}</td><td><small>{r["role"]}</small></td>'
                   f'{_cell(r["success_rate"])}{_cell(r["time_us_median"])}</tr>')
    out.append("</table><h3>Series of this machine that stepped most recently</h3>")
    if d["changes"]:
        out.append('<table class="hist"><tr><th>commit</th><th>date</th><th>figure</th><th>family</th><th>spec</th>'
                   '<th>step [95 %]</th><th>p</th></tr>')
        for c in d["changes"]:
            cls = "worse" if c["regression"] else "better"
            out.append(f'<tr><td>{e(c["commit"])}</td><td>{e((c["commit_date"] or "")[:10])}</td><td>{e(c["figure"])}'
                       f'</td><td>{e(c["family"])}</td><td>{e(c["solver"])}</td><td class="{cls}">'
                       f'{e(step_text(c["step"], c["step_low"], c["step_high"], c["scale"]))}</td>'
                       f'<td>{c["p_value"]:.2g}</td></tr>')
        out.append("</table>")
    else:
        out.append("<p>None.</p>")
    out.append("<style>.ikbench-history table.hist td,.ikbench-history table.hist th{padding:2px 8px;"
               "border-bottom:1px solid #eee;text-align:left}.ikbench-history .worse{color:#b0281a}"
               ".ikbench-history .better{color:#1d7a35}.ikbench-history{margin:2em 1em}</style></section>")
    return "".join(out)


def add_history_section(page_path, data, db, run_dir, allow_incomplete=False):
    """Inserts the history section into the written report page (before </body>); returns its data."""
    from ..io.results import load

    run = load(run_dir, allow_incomplete=allow_incomplete)
    d = section_data(db, run, data["headline"])
    text = page_path.read_text(encoding="utf-8")
    at = text.rfind("</body>")
    if at < 0:
        at = len(text)
    text = text[:at] + section_html(d) + "\n" + text[at:]
    atomic_write_text(page_path, text, inputs=store_files(db))
    return d
