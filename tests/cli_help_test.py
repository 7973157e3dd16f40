#!/usr/bin/python3
"""Every subcommand's --help lists its options and exit statuses under `ikbench SUBCOMMAND`, and
every `--option` that README.md or docs/*.md shows in a code span after `ikbench SUBCOMMAND` is
one the subcommand's help lists.

    cli_help_test.py IKBENCH_BINARY REPO_DIR

The C++ binary answers run, list, throughput, verify and merge itself and forwards compare,
report, tune, plot and tail (their --help included) to the analysis library; summary and gate are the
library's own (`python3 -m ikbench`). Exit status 0 when everything holds, 1 with a list of what
does not.
"""
import os
import re
import subprocess
import sys
from pathlib import Path

CPP = ["run", "list", "throughput", "verify", "merge", "compare", "report", "tune", "plot", "tail"]
# The C++ binary's own commands (the others it forwards to the library); `python3 -m ikbench verify`
# is the library's verify, with options of its own, checked against the library's help.
CPP_OWN = ["run", "list", "throughput", "verify", "merge"]
LIBRARY = "python3 -m ikbench "
PYTHON = ["summary", "gate"]
# Subcommands whose own subcommands have options of their own.
NESTED = {"gate": ["compare", "update", "show"]}


def help_text(binary, repo, sub, nested=None):
    args = [sub] + ([nested] if nested else []) + ["--help"]
    if sub in CPP:
        cmd = [binary] + args
    else:
        cmd = ["/usr/bin/python3", "-m", "ikbench"] + args
    env = dict(os.environ, PYTHONPATH=str(Path(repo) / "python"), MPLBACKEND="Agg")
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    return p.returncode, p.stdout + p.stderr


def code_spans(text):
    """Inline code spans and the lines of fenced code blocks."""
    spans, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            spans.append(line)
        else:
            spans += re.findall(r"`([^`]+)`", line)
    return spans


def mentioned_options(repo):
    """{subcommand: {option: [where, ...]}} from README.md and docs/*.md."""
    found = {}
    files = [Path(repo) / "README.md"] + sorted((Path(repo) / "docs").glob("*.md"))
    for f in files:
        for span in code_spans(f.read_text(encoding="utf-8")):
            span = span.split(" # ")[0]  # a shell comment
            for m in re.finditer(r"(?<![\w/.-])(-m\s+)?ikbench\s+([a-z]+)\b(.*)", span):
                library, sub, rest = m.group(1), m.group(2), m.group(3)
                if sub not in CPP + PYTHON:
                    continue
                if library and sub in CPP_OWN:
                    sub = LIBRARY + sub  # the library's own command of that name (verify)
                # Up to the end of this command: a shell pipe, ';', '&&', or the arguments that
                # another program passes on after '--'.
                rest = re.split(r"\s\|\s|;|&&|\s--\s|\s--$", rest)[0]
                for opt in re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", rest):
                    found.setdefault(sub, {}).setdefault(opt, []).append(f.name)
    return found


def main(binary, repo):
    problems = []
    helps = {}
    for sub in CPP + PYTHON:
        rc, text = help_text(binary, repo, sub)
        for nested in NESTED.get(sub, []):
            text += "\n" + help_text(binary, repo, sub, nested)[1]
        helps[sub] = text
        if rc != 0:
            problems.append(f"ikbench {sub} --help: exit status {rc}")
        if not re.search(rf"usage:.*\bikbench {sub}\b", text, re.IGNORECASE):
            problems.append(f"ikbench {sub} --help: no usage line naming 'ikbench {sub}'")
        if "python3 -m ikbench" in text.split("\n", 3)[0]:
            problems.append(f"ikbench {sub} --help: the usage line names python3 -m ikbench")
        if not re.search(r"exit status", text, re.IGNORECASE):
            problems.append(f"ikbench {sub} --help: no exit statuses")
        if not re.search(r"--[a-z]|positional|Positionals", text.replace("--help", "")):
            problems.append(f"ikbench {sub} --help: lists no arguments or options")
    mentioned = mentioned_options(repo)
    checked = 0
    for sub, options in sorted(mentioned.items()):
        if sub.startswith(LIBRARY):
            env = dict(os.environ, PYTHONPATH=str(Path(repo) / "python"), MPLBACKEND="Agg")
            helps[sub] = subprocess.run(["/usr/bin/python3", "-m", "ikbench", sub[len(LIBRARY):], "--help"],
                                        capture_output=True, text=True, env=env, timeout=120).stdout
        listed = set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", helps[sub]))
        for opt, where in sorted(options.items()):
            checked += 1
            if opt not in listed:
                problems.append(f"ikbench {sub} {opt} (in {', '.join(sorted(set(where)))}): not in "
                                f"'ikbench {sub} --help'")
    if checked == 0:
        problems.append("no option of any subcommand found in README.md and docs/*.md (the scan is broken)")
    for p in problems:
        print(p)
    print(f"{len(CPP + PYTHON)} subcommands' help read, {checked} documented options checked, "
          f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[3].strip(), file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
