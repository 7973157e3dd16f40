"""report.html's history section: each headline cell's trend with its change points, and the
machine's series that stepped most recently."""
from conftest import sha
from ikbench.cli.main import main


def test_report_history_section(db, step_runs, tmp_path, capsys):
    assert main(["history", "add", *map(str, step_runs), "--db", db]) == 0
    page = tmp_path / "report.html"
    assert main(["report", str(step_runs[-1]), "--out", str(page), "--history", db]) == 0
    text = page.read_text()
    start = text.index('<section id="history"')
    sec = text[start:text.index("</section>", start)]
    assert text.index("</body>") > start
    # the headline cells: each family's leader, with both sparklines; dls stepped at the 7th commit
    assert sec.count('<svg class="spark"') >= 4
    assert 'class="cp"' in sec and f"at {sha(6)[:10]}" in sec
    recent = sec[sec.index("stepped most recently"):]
    assert sha(6)[:10] in recent and "time_us_median" in recent and "success_rate" in recent
    assert "src=\"http" not in sec and "href=\"http" not in sec   # nothing loaded from outside


def test_report_history_unknown_machine(db, step_runs, tmp_path, capsys):
    assert main(["history", "add", str(step_runs[0]), "--db", db]) == 0
    import synth

    other = synth.make_run(tmp_path / "other", seed=3, problems=10, cpu="Elsewhere CPU")
    page = tmp_path / "r.html"
    assert main(["report", str(other), "--out", str(page), "--history", db]) == 0
    assert "No run of this machine identity is in the store yet" in page.read_text()


def test_report_history_bad_store(tmp_path, step_runs, capsys):
    page = tmp_path / "r.html"
    assert main(["report", str(step_runs[0]), "--out", str(page), "--history", str(tmp_path / "none.sqlite")]) == 2
    assert "no such history store" in capsys.readouterr().err
