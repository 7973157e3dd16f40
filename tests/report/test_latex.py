"""`ikbench report RUN --latex DIR`: one booktabs .tex file per table (headline, per robot, per
family), rows = the figures' rows, intervals as `98.5 [97.1, 99.3]`, names escaped for LaTeX.
Compile-free: the files are read as text."""
import argparse
import re

import pytest

from ikbench.analysis import figures
from ikbench.render import latex
from ikbench.io import results
from ikbench.cli import report_commands

ROW_END = re.compile(r"\s*\\\\\s*$")


def run_cli(run_dir, out, tex):
    ap = argparse.ArgumentParser()
    report_commands.add_arguments(ap)
    return report_commands.main_from_args(ap.parse_args([str(run_dir), "--out", str(out), "--latex", str(tex)]))


@pytest.fixture(scope="module")
def exported(rich_dir, tmp_path_factory):
    tex = tmp_path_factory.mktemp("latex") / "tables"
    assert run_cli(rich_dir, tex.parent / "report.html", tex) == 0
    return results.load(rich_dir), tex


def body_rows(text):
    """The cells of the rows between \\midrule and \\bottomrule."""
    body = text.split("\\midrule\n", 1)[1].split("\\bottomrule", 1)[0]
    return [[c.strip() for c in ROW_END.sub("", line).split(" & ")] for line in body.splitlines() if line.strip()]


def success(rate, lo, hi):
    return f"{100 * rate:.1f} [{100 * lo:.1f}, {100 * hi:.1f}]"


def test_one_file_per_table_with_booktabs_rules(exported):
    run, tex = exported
    fams = list(dict.fromkeys(run.solves["family"]))
    names = sorted(p.name for p in tex.glob("*.tex"))
    assert names == sorted(["headline.tex", "robots.tex"] + [f"family-{latex.slug(f)}.tex" for f in fams])
    for p in tex.glob("*.tex"):
        t = p.read_text()
        assert [t.count(r) for r in ("\\toprule", "\\midrule", "\\bottomrule")] == [1, 1, 1], p
        assert t.index("\\toprule") < t.index("\\midrule") < t.index("\\bottomrule"), p
        assert "\\hline" not in t and "\\begin{tabular}" in t and "\\end{table}" in t, p
        header = t.split("\\toprule\n", 1)[1].split("\\midrule", 1)[0]
        ncols = len(ROW_END.sub("", header.strip()).split(" & "))
        assert all(len(r) == ncols for r in body_rows(t)), p


def test_family_tables_are_the_summary_rows(exported):
    run, tex = exported
    summary = figures.summarize(run)
    for fam, part in summary.groupby("family", sort=False):
        rows = body_rows((tex / f"family-{latex.slug(fam)}.tex").read_text())
        assert sorted(r[0] for r in rows) == sorted(latex.escape(s) for s in part["solver"])
        by = {r[0]: r for r in rows}
        for r in part.to_dict("records"):
            cells = by[latex.escape(r["solver"])]
            if r["available"]:
                assert cells[3] == success(r["success_rate"], r["success_ci_low"], r["success_ci_high"])
                assert re.fullmatch(r"[\d.]+ \[[\d.]+, [\d.]+\]", cells[5]), cells   # median time [CI]
            else:
                assert cells[3] == "n/a"
        ranked = [r[1] for r in rows if r[1] != "--"]
        assert ranked == sorted(ranked, key=lambda x: int(x.lstrip("=")))      # best first


def test_headline_and_robot_tables_are_the_figures_rows(exported):
    run, tex = exported
    summary = figures.summarize(run)
    leaders = figures.family_leaders(summary)
    rows = body_rows((tex / "headline.tex").read_text())
    assert [r[0] for r in rows] == [latex.escape(f) for f in leaders["family"]]
    rec = summary.to_dict("index")
    for r, v in zip(rows, leaders.to_dict("records")):
        if v["leaders"]:
            for spec in v["leaders"]:
                assert latex.escape(spec) in r[3]
            first = summary[(summary["family"] == v["family"]) & (summary["solver"] == v["leaders"][0])].iloc[0]
            assert r[4] == success(first["success_rate"], first["success_ci_low"], first["success_ci_high"])
        if v["peer"] is not None:
            p = rec[v["peer_row"]]
            assert r[6] == latex.escape(p["solver"])
    robots = figures.robot_summary(run)
    rows = body_rows((tex / "robots.tex").read_text())
    assert sorted((r[0], r[1]) for r in rows) == sorted((latex.escape(a), latex.escape(b))
                                                         for a, b in zip(robots["robot"], robots["solver"]))


def test_names_are_escaped():
    assert latex.escape("a_b%c&d#e{f}$g~h^i\\j") == \
        r"a\_b\%c\&d\#e\{f\}\$g\textasciitilde{}h\textasciicircum{}i\textbackslash{}j"
    name = "auto:solutions=all:time_budget_us=0#1&{x}%"
    data = {"run": {"name": "r_1"}, "families": [{"name": "fam_1", "dof": 2, "goal": "pose"}], "robots": [],
            "headline": [{"family": "fam_1", "verdict": "winner", "ran": 1, "succeeded": 1, "leaders": [
                {"solver": name, "rank": 1, "tied_leader": True, "available": True, "success_rate": 0.985,
                 "success_ci_low": 0.971, "success_ci_high": 0.993, "time_us_median": 12.0,
                 "time_us_median_ci_low": 11.0, "time_us_median_ci_high": 13.5}], "peer": None}],
            "summary": {"columns": ["family", "solver", "solves", "available", "rank", "tied_leader", "success_rate",
                                    "success_ci_low", "success_ci_high", "iterations_median", "time_us_median",
                                    "time_us_median_ci_low", "time_us_median_ci_high", "time_us_mean",
                                    "time_us_mean_ci_low", "time_us_mean_ci_high", "time_us_p99"],
                        "rows": [["fam_1", name, 10, True, 1, True, 0.985, 0.971, 0.993, 4, 12.0, 11.0, 13.5, 12.5,
                                  12.0, 13.0, 20.0]]}}
    texts = {t["name"]: latex.render(t, "r_1") for t in latex.tables(data)}
    esc = r"auto:solutions=all:time\_budget\_us=0\#1\&\{x\}\%"
    assert set(texts) == {"headline", "family-fam_1"}
    for t in texts.values():
        assert esc in t and name not in t
    assert "98.5 [97.1, 99.3]" in texts["headline"] and "fam\\_1" in texts["headline"]
    assert body_rows(texts["family-fam_1"])[0][:4] == [esc, "=1", "10", "98.5 [97.1, 99.3]"]


def test_latex_into_a_file_is_a_clear_error(rich_dir, tmp_path):
    f = tmp_path / "not-a-dir"
    f.write_text("x")
    with pytest.raises(results.ResultsError, match="not-a-dir.*directory"):
        run_cli(rich_dir, tmp_path / "r.html", f)
    assert not (tmp_path / "r.html").exists()   # refused before the report's work
