#!/usr/bin/python3
"""No measured figure in README.md or docs/*.md that is neither generated nor shown with its command,
and no diary of machines, loads or attempts.

    docs_figures_test.py REPO_DIR          check (exit 0, or 1 with the offending sentences listed)
    docs_figures_test.py --self-test       check the rules on sentences that must and must not be flagged

Rule 1, per sentence (a table row is one): a figure is a time (a number with ns, us, µs, ms, s, min,
h or their words), a rate (/s, per second), a percentage, a size (KB, MB, GB, KiB, MiB, GiB) or a
ratio ("3.2x", "3.2×", "1/30"). A sentence holding one must stand inside a generated table (between
`<!-- history-table:NAME -->` and `<!-- /history-table -->`, which python/ikbench/render/doctables.py
writes from results/history/ and the ctest history_docs_current keeps current) or carry the command
that measures it in inline code in the same sentence or on the same line (ikbench, build/..., scripts/...,
python3, bench_*, ctest, ...). A sentence that states a target, limit, budget, default or tolerance
rather than a measurement, and a confidence level ("Wilson 95 %"), is not a measured figure. Code
blocks and inline code (spec strings, option values) are not read.

Rule 2, per line outside code and generated tables: no diary (a machine, its load or a date of a
measurement, "we tried", "last round", ...): a document says how a figure is measured, the generated
table says where and when.
"""
import re
import sys

from pathlib import Path

import docs_check

NUMBER = r"(?<![\w.])\d(?:[\d,  ]*\d)?(?:\.\d+)?(?:\s*(?:[-–]|to)\s*\d+(?:\.\d+)?)?"
UNIT = (r"\s?(?:ns|us|µs|ms|s|seconds?|min|minutes?|h|hours?|/s|per second|%|KB|kB|MB|GB|KiB|MiB|GiB)"
        r"(?![\w=])")
FIGURE = re.compile(NUMBER + UNIT + r"|" + NUMBER + r"[x×](?![\w=])|(?<![\w./])(?!(?:19|20)\d\d/)\d+/\d+(?![\w/.])")
NOT_MEASURED = re.compile(r"\bbudget|\btarget\b|\blimit|\btimeout|\bat most\b|\bat least\b|\bup to\b|≤|≥|\bcap\b|"
                          r"\bdefault|\bthreshold|\bmore than\b|[<>] ?\d|\bis worth\b|\btolerance|\bevery \d|\bwithin \d|\bframes per second\b|\ballows?\b|\bat or (?:below|above)\b|\b(?:below|under|above) \d|\bplanted\b|\bsimulat|\bsynthetic\b|\binjected\b|--|= ?\d", re.IGNORECASE)
CONFIDENCE = re.compile(r"(?:Wilson|bootstrap|confidence|credible)\s+\d+(?:\.\d+)?\s?%|"
                        r"\d+(?:\.\d+)?\s?% (?:confidence|interval|CI|credible)", re.IGNORECASE)
COMMAND = re.compile(r"`(?:\./)?(?:ikbench|build/|scripts/|python3|/usr/bin/python3|PYTHONPATH=|bench_|valgrind|"
                     r"perf |ctest|IKBENCH_|time |cmake)")
DIARY = re.compile(r"\bthis machine\b|\bour machine\b|\bthe shared (?:\d-core )?machine\b|\bwe tried\b|"
                   r"\bwe (?:ran|measured|saw|found)\b|\blast (?:round|time|run)\b|\byesterday\b|"
                   r"\btoday\b|\bat the time of writing\b|\bthis development\b|\b(?:a|the|at) load(?: average)? (?:of )?\d|"
                   r"\bload average (?:of )?\d|\bwhile (?:another|other) builds?\b", re.IGNORECASE)
SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+(?=[A-Z`(*\[])")
BEGIN, END = "<!-- history-table:", "<!-- /history-table -->"


def paragraphs(text):
    """[[(line number, line)]] of the prose of a Markdown document (no code block, no generated table);
    a table row is a paragraph of its own."""
    out, cur, fenced, generated = [], [], False, False

    def flush():
        if cur:
            out.append(list(cur))
            cur.clear()
    for n, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            flush()
            continue
        if line.startswith(BEGIN):
            generated = True
            flush()
            continue
        if line.startswith(END):
            generated = False
            continue
        if fenced or generated or line.startswith("    "):
            continue
        stripped = line.strip()
        if not stripped or re.match(r"#{1,6}\s", line) or stripped.startswith(("|", "* ", "- ", "<!--")) or \
                re.match(r"\d+\.\s", stripped):
            flush()
            if stripped.startswith("|") and not re.fullmatch(r"\|[\s:|-]*", stripped):
                out.append([(n, stripped)])
                continue
            if not stripped or re.match(r"#{1,6}\s", line):
                if re.match(r"#{1,6}\s", line):
                    out.append([(n, stripped)])
                continue
        cur.append((n, stripped))
    flush()
    return out


def sentences(paragraph):
    """[(first line number, sentence, a line it spans names a command)] of one paragraph."""
    text, spans = "", []
    for n, line in paragraph:
        start = len(text) + (1 if text else 0)
        text = (text + " " + line) if text else line
        spans.append((start, len(text), n, bool(COMMAND.search(line))))
    out, pos = [], 0
    bounds = [m.start() for m in SENTENCE_END.finditer(text)] + [len(text)]
    for b in bounds:
        s = text[pos:b].strip()
        if s:
            lines = [(n, cmd) for a, e, n, cmd in spans if a < b and e > pos]
            out.append((lines[0][0], s, any(cmd for _, cmd in lines)))
        pos = b
    return out


def figures(sentence):
    """The measured figures of a sentence (none where it states a target, limit or budget)."""
    text = CONFIDENCE.sub("", re.sub(r"`[^`]*`", "", sentence))
    text = re.sub(r"\]\([^)]*\)", "]", text)  # link targets are paths, not figures
    if NOT_MEASURED.search(text):
        return []
    # a zero (0 %, 0 s) states an absence, not a measurement
    return [m.group(0).strip() for m in FIGURE.finditer(text) if not re.fullmatch(r"0(?:\.0+)?", re.split(r"[^\d.]", m.group(0).strip())[0])]


def offending(sentence, line_has_command=False):
    return bool(figures(sentence)) and not line_has_command and not COMMAND.search(sentence)


def diary(line):
    return DIARY.search(re.sub(r"`[^`]*`", "", line))


def check_text(name, text):
    bad = []
    for par in paragraphs(text):
        for n, s, cmd in sentences(par):
            if offending(s, cmd):
                bad.append(f"{name}:{n}: figure {', '.join(figures(s))} without its command: {s[:160]}")
            m = diary(s)
            if m:
                bad.append(f"{name}:{n}: diary ({m.group(0)!r}): {s[:160]}")
    return bad


def check(repo):
    repo = Path(repo)
    bad = []
    for doc in [repo / "README.md"] + sorted((repo / "docs").glob("*.md")):
        bad += check_text(str(doc.relative_to(repo)), doc.read_text(encoding="utf-8"))
    return bad


MUST_FLAG = ["The solve took 12.5 us on the Xeon VM.", "`auto` reaches 1 250 000 /s on two threads.",
             "a median of 11.0 and 6.0 µs per solve", "The report took 30 s.", "The report is 9.6 MB.",
             "`auto` succeeds on 99.4 % of the targets.", "The batch is 3.2x faster.", "One in 1/30 fails.",
             "| `auto` | 284 ns |", "It is 2.5× slower than `dls`.", "The build takes 12 minutes."]
MUST_PASS = ["a 5 ms budget per solve", "The targets are FK in at most 200 ns.", "every 200 ms",
             "`time_budget_us=5000:restarts=2` in the mean of the spec", "1e-5 m and 1e-5 rad", "times in µs",
             "success [Wilson 95 %]", "the default of 8 restarts", "a 4x4 matrix", "see [the table](a/1/2.md)",
             "The report is 9.6 MB (`scripts/results_size.py runs/x`).", "a 2x2 block", "7-DOF arms",
             "IK-Geo (2022/2024)", "Murray 1994 sec. 3.3", "E = 1/2 |e|^2", "no solve at 0 %", "CI allows 45 minutes."]
DIARY_FLAG = ["On this machine it took longer.", "at a load average of 9 to 15", "We tried a larger library.",
              "In the last round the gate failed.", "On the shared 2-core machine the times vary."]
DIARY_PASS = ["The load average is recorded in run.json.", "a machine's identity", "the last row"]


def self_test():
    for s in MUST_FLAG:
        assert offending(s), s
    for s in MUST_PASS:
        assert not offending(s), (s, figures(s))
    for s in DIARY_FLAG:
        assert diary(s), s
    for s in DIARY_PASS:
        assert not diary(s), s
    doc = ("# A\n\nThe solve took 12.5 us. It is fast.\n\n```sh\nikbench run\n```\n"
           "The solve took 12.5 us and\nthen `ikbench run --suite quick` measures it.\n"
           "Another sentence took 3 s.\n\n<!-- history-table:x -->\nThe solve took 9 us.\n<!-- /history-table -->\n"
           "| a | 3 ms |\n|---|---|\n")
    got = check_text("d", doc)
    assert [b.split(":")[1] for b in got] == ["3", "10", "15"], got
    print("self-test passed")


def main(argv):
    return docs_check.main(argv, __doc__, self_test, check, "measured figures without their command, or diaries")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
