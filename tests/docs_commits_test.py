#!/usr/bin/python3
"""Every commit README.md and docs/*.md cite is a commit of this repository.

    docs_commits_test.py REPO_DIR          check (exit 0, or 1 naming each document and hash not found)
    docs_commits_test.py --self-test       check which words the rule takes for commits

A cited commit is a word of 7 to 40 hexadecimal digits (holding a digit and a letter, with an optional
`+dirty`) in the prose or the tables, outside code blocks (whose examples hold checksums and made-up
hashes). Machine identities are hexadecimal too: the keys that the generated tables' footers define
("Machines: `KEY` = label") are not commits. A word is found when `git cat-file -e WORD^{commit}`
succeeds; outside a git checkout (a source tarball) the test is skipped with a message (exit 77).
"""
import re
import subprocess
import sys

from pathlib import Path

import docs_check

HEX = re.compile(r"(?<![\w/.#-])([0-9a-f]{7,40})(?:\+dirty)?(?![\w/.-])")
MACHINE_KEY = re.compile(r"`([0-9a-f]{7,40})` = ")
SKIP = 77


def candidates(text):
    """[(line number, word)] of the hexadecimal words of a Markdown text outside code blocks."""
    out, fenced = [], False
    for n, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced:
            continue
        for m in HEX.finditer(line):
            w = m.group(1)
            if re.search(r"\d", w) and re.search(r"[a-f]", w):
                out.append((n, w))
    return out


def machine_keys(texts):
    return {k for t in texts for line in t.splitlines() if line.startswith("Machines:")
            for k in MACHINE_KEY.findall(line)}


def check(repo):
    repo = Path(repo)
    docs = [repo / "README.md"] + sorted((repo / "docs").glob("*.md"))
    texts = {d: d.read_text(encoding="utf-8") for d in docs}
    keys = machine_keys(texts.values())
    known, bad = {}, []
    for doc, text in texts.items():
        for n, word in candidates(text):
            if word in keys:
                continue
            if word not in known:
                known[word] = subprocess.run(["git", "-C", str(repo), "cat-file", "-e", word + "^{commit}"],
                                             capture_output=True).returncode == 0
            if not known[word]:
                bad.append(f"{doc.relative_to(repo)}:{n}: `{word}` is not a commit of this repository")
    return bad


def self_test():
    text = ("Measured at commit `51615e6c6f+dirty` on `26c7fdc1125b` (x).\n"
            "| m | 9e3289ce66 | 2026-11-26 |\n```json\n{\"fnv1a64\": \"0123456789abcdef\"}\n```\n"
            "a path build/abc1234def/x, an anchor #ab12cd3ef and a word deadbeef and decade 1234567\n")
    got = [w for _, w in candidates(text)]
    assert got == ["51615e6c6f", "26c7fdc1125b", "9e3289ce66"], got
    assert machine_keys(["Machines: `26c7fdc1125b` = AMD EPYC; `10840fdeb64a` = other.\n"]) == \
        {"26c7fdc1125b", "10840fdeb64a"}
    print("self-test passed")


def not_a_checkout(repo):
    """(SKIP, why) outside a git checkout, where no commit can be looked up; else None."""
    inside = subprocess.run(["git", "-C", repo, "rev-parse", "--git-dir"], capture_output=True)
    if inside.returncode != 0:
        return SKIP, f"{repo}: not a git checkout, so its commits cannot be looked up: skipped"
    return None


def main(argv):
    return docs_check.main(argv, __doc__, self_test, check, "cited commits not in this repository",
                           skip=not_a_checkout)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
