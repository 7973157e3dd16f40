"""Console text fits the terminal without cutting a name (ikbench.render.console): `compare` and `summary` with
long family and spec names at 80 and 120 columns, the direction of a comparison's verdicts in its
header, and the "next:" lines that end the summary."""
import pytest
import synth
from conftest import cli
from test_compare import BASE, BETTER, console_cells

from ikbench.analysis import compare, figures
from ikbench.render import compare_render, console, tables
from ikbench.io import results

LONG_SPEC = "dls:lambda=0.05:max_step=0.5:restarts=20:time_budget_us=5000:max_iterations=300:stall_iterations=9"
FAMILIES = ("chain7-position-realistic-limits", "chain7-pose-realistic-limits")   # alike for 8 characters


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("width")
    extra = {LONG_SPEC: (0.6, 3.0, (20, 80)), "dls:lambda=0.1": (0.8, 1.0, (5, 30))}
    a = synth.make_run(base / "a", seed=1, problems=60, solvers=dict(BASE, **extra), families=FAMILIES,
                       unsupported=())
    b = synth.make_run(base / "b", seed=2, problems=60, solvers=dict(BETTER, **extra), families=FAMILIES,
                       unsupported=())
    return a, b


@pytest.mark.parametrize("width", [80, 120])
def test_compare_fits_the_width_and_keeps_every_name(runs, width):
    a, b = (results.load(d) for d in runs)
    res = compare.compare_runs(a, b)
    text = compare_render.format_text(res, show_all=True, width=width)
    assert max(len(line) for line in text.splitlines()) <= width
    cells = console_cells(text, prefix="chain7-")
    assert set(cells) == set(zip(res.rows["family"], res.rows["solver"]))   # every family and spec whole
    for r in res.rows.to_dict("records"):
        assert compare_render.verdict_text(r["verdict"]) in cells[(r["family"], r["solver"])]  # its own verdict
    assert "~" not in text
    assert "B vs A: better / worse = B is better / worse than A" in text
    # the same through the command line, whose --width says the columns
    p = cli("compare", *runs, "--all", "--width", str(width), check=0)
    assert max(len(line) for line in p.stdout.splitlines()) <= width
    assert set(console_cells(p.stdout, prefix="chain7-")) == set(cells)


def test_compare_of_two_specs_says_which_is_b(runs):
    p = cli("compare", runs[0], "--specs", "dls:lambda=0.1", LONG_SPEC, "--all", check=0)
    assert f"B vs A: better / worse = B (spec {LONG_SPEC}) is better / worse than A (spec dls:lambda=0.1)" in \
        console.unwrap(p.stdout).replace("\n  ", " ")
    assert max(len(line) for line in p.stdout.splitlines()) <= 100              # a pipe: 100 columns


@pytest.mark.parametrize("width", [80, 120])
@pytest.mark.parametrize("table", ["compact", "full"])
def test_summary_fits_the_width_and_keeps_every_name(runs, width, table):
    run = results.load(runs[0])
    summary = figures.summarize(run, n_resamples=200)
    text = tables.summary_table(run, summary, table=table, width=width)
    assert max(len(line) for line in text.splitlines()) <= width
    whole = console.unwrap(text)
    for fam in FAMILIES:
        assert fam in whole.split()
    if table == "full":
        tokens = set(whole.replace(" | ", " ").split())
        assert set(run.solver_specs) <= tokens
    else:
        leaders = {s for ls in figures.family_leaders(summary)["leaders"] for s in ls[:tables.COMPACT_LEADERS]}
        assert all(s in whole for s in leaders)


def test_summary_ends_with_what_to_run_next(runs):
    d = runs[0]
    p = cli("summary", d, check=0)
    lines = p.stdout.rstrip("\n").splitlines()
    assert max(len(line) for line in lines) <= 100
    nxt = [line for line in console.unwrap(p.stdout).splitlines() if line.startswith("next: ")]
    assert [line.split()[2] for line in nxt] == ["report", "compare", "plot"]
    assert lines[-1].startswith(("next: ", "    ")) and console.unwrap(p.stdout).rstrip().splitlines()[-1] == nxt[-1]
    plot = nxt[-1]
    assert f"plot convergence {d} --family " in plot and "--solvers " in plot
    # the suggested command runs
    argv = plot.split("   #")[0].split()[3:]
    q = cli("plot", *argv, "--out", d.parent / "next.png", check=0)
    assert "written:" in q.stdout


def test_long_names_break_and_join_back():
    for width in (30, 40, 80):
        lines = console.break_long(LONG_SPEC, width)
        assert max(len(x) for x in lines) <= width
        assert console.unwrap("\n".join(lines)) == LONG_SPEC
        cmd = f"ikbench run --suite quick --solvers {LONG_SPEC},ccd --trace-problems 30 --out /tmp/x"
        cl = console.command_lines(cmd, width)
        assert console.unwrap("\n".join(cl)) == cmd
    assert console.terminal_width(open("/dev/null", "w")) == console.DEFAULT_WIDTH   # not a terminal: 100
