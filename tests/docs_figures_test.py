#!/usr/bin/python3
"""No measured figure in README.md or docs/*.md without the command that regenerates it.

    docs_figures_test.py REPO_DIR          check (exit 0, or 1 with the offending sentences listed)
    docs_figures_test.py --self-test       check the rule on sentences that must and must not be flagged

A measured figure is a time (a number with ns, us, µs, ms or s) or a rate (a number with /s, or
"per second") in a sentence that reports a measurement (measured, took, median, mean, faster,
slower, per solve, per call, throughput, ...) and is not a target, limit or budget. Outside the
generated tables (between `<!-- history-table:NAME -->` and `<!-- /history-table -->`, which
python/ikbench/render/doctables.py writes from results/history/ and the ctest
history_docs_current keeps current), such a sentence must stand in a section (the text under one
heading) that shows the command that measures it: a code block, or inline code naming a command
(ikbench, build/release/..., scripts/..., python3, bench_*, valgrind, perf, ctest).
"""
import re
import sys
from pathlib import Path

FIGURE = re.compile(r"\d(?:[\d,  ]*\d)?(?:\.\d+)?(?:\s*[-–]\s*\d+(?:\.\d+)?)?\s?"
                    r"(?:ns|us|µs|ms|s|/s|per second)(?![\w=])")
MEASURED = re.compile(r"\bmeasured\b|\btook\b|\btakes?\b|\bmedian\b|\bmean\b|\bfaster\b|\bslower\b|\bper solve\b"
                      r"|\bper call\b|\bper iteration\b|\bper lane-step\b|\bthroughput\b|\bsolves/s\b|\bgave\b"
                      r"|\breach(?:es|ed)?\b|\bran\b|\bin \d", re.IGNORECASE)
NOT_MEASURED = re.compile(r"\bbudget|\btarget|\blimit|\btimeout|\bat most\b|\bat least\b|≤|≥|\bcap\b|--|=\d",
                          re.IGNORECASE)
COMMAND = re.compile(r"`(?:\./)?(?:ikbench|build/|scripts/|python3|/usr/bin/python3|PYTHONPATH=|bench_|valgrind|"
                     r"perf |ctest|IKBENCH_|time )")
SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+(?=[A-Z`(*])")
BEGIN, END = "<!-- history-table:", "<!-- /history-table -->"


def sections(text):
    """[(heading, prose sentences, has a command)] of one Markdown document."""
    out, heading, prose, command, fenced, generated = [], "(top)", [], False, False, False
    for line in text.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            command = True  # a code block: the section shows its commands
            continue
        if fenced:
            continue
        if line.startswith(BEGIN):
            generated = True
            continue
        if line.startswith(END):
            generated = False
            continue
        if generated:
            continue
        if re.match(r"#{1,6}\s", line):
            out.append((heading, " ".join(prose), command))
            heading, prose, command = line.strip("# ").strip(), [], False
            continue
        if COMMAND.search(line):
            command = True
        prose.append(line.strip())
    out.append((heading, " ".join(prose), command))
    return [(h, [s.strip() for s in SENTENCE_END.split(p) if s.strip()], c) for h, p, c in out]


def offending(sentence):
    # Inline code (spec strings, option values, file names) holds no measured figure.
    text = re.sub(r"`[^`]*`", "", sentence)
    return bool(FIGURE.search(text) and MEASURED.search(text) and not NOT_MEASURED.search(text))


def check(repo):
    repo = Path(repo)
    bad = []
    for doc in [repo / "README.md"] + sorted((repo / "docs").glob("*.md")):
        for heading, sentences, command in sections(doc.read_text(encoding="utf-8")):
            if command:
                continue
            for s in sentences:
                if offending(s):
                    bad.append(f"{doc.relative_to(repo)}: \"{heading}\": {s[:160]}")
    return bad


MUST_FLAG = ["The solve took 12.5 us on the Xeon VM.", "`auto` reaches 1 250 000 /s on two threads.",
             "a median of 11.0 and 6.0 µs per solve", "The report took 30 s."]
MUST_PASS = ["a 5 ms budget per solve", "The targets are FK in at most 200 ns.", "every 200 ms",
             "`time_budget_us=5000:restarts=2` in the mean of the spec", "1e-5 m and 1e-5 rad", "times in µs"]


def self_test():
    for s in MUST_FLAG:
        assert offending(s), s
    for s in MUST_PASS:
        assert not offending(s), s
    doc = ("# A\n\nThe solve took 12.5 us.\n\n## B\n\n```sh\nikbench run\n```\nThe solve took 12.5 us.\n\n"
           "## C\n\n<!-- history-table:x -->\nThe solve took 9 us.\n<!-- /history-table -->\n")
    got = [(h, c, [s for s in ss if offending(s)]) for h, ss, c in sections(doc)]
    assert got[1] == ("A", False, ["The solve took 12.5 us."]), got
    assert got[2][1] is True and got[3][2] == [], got
    print("self-test passed")


def main(argv):
    if argv[1:2] == ["--self-test"]:
        self_test()
        argv = argv[:1] + argv[2:]
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    bad = check(argv[1])
    for b in bad:
        print(b)
    print(f"{len(bad)} measured figures without the command that regenerates them")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
