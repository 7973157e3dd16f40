"""Generated tables of measured figures: written between markers, and --check fails when stale."""
import json

from conftest import write_throughput, synthetic_run
from ikbench.cli import main
from ikbench.history import doctables


def test_write_then_check(tmp_path, capsys):
    db = str(tmp_path / "h.sqlite")
    d = synthetic_run(tmp_path / "r", 1)
    write_throughput(d, 1234.0)
    assert main(["history", "add", str(d), "--db", db]) == 0
    export = tmp_path / "history.json"
    assert main(["history", "export", "--format", "json", "--out", str(export), "--db", db]) == 0
    doc = tmp_path / "doc.md"
    doc.write_text("# Doc\n\nmethod text\n\n<!-- history-table:quick -->\nold\n<!-- /history-table -->\n\nafter\n")
    assert doctables.main([str(export), "--check", str(doc)]) == 1
    assert "quick" in capsys.readouterr().err
    assert doctables.main([str(export), "--write", str(doc)]) == 0
    text = doc.read_text()
    assert "old" not in text and text.startswith("# Doc\n\nmethod text\n") and text.endswith("after\n")
    rows = [ln for ln in text.splitlines() if ln.startswith("| ") and not ln.startswith("| machine")]
    assert len(rows) == 1 and "2,221" in rows[0]         # dls solves/s on 2 threads: 1.8 x 1234 from throughput.json
    assert doctables.main([str(export), "--check", str(doc)]) == 0
    # a changed history makes the document stale
    data = json.loads(export.read_text())
    for p in data["records"][0]["points"]:
        if p["figure"] == "solves_per_s":
            p["value"] *= 2
    export.write_text(json.dumps(data))
    assert doctables.main([str(export), "--check", str(doc)]) == 1
