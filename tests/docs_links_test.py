#!/usr/bin/python3
"""Every relative link and #anchor in README.md and docs/*.md resolves.

    docs_links_test.py REPO_DIR          check (exit 0, or 1 with the broken links listed)
    docs_links_test.py --self-test       check the slug rule and the checker on known cases

A link `[text](path#anchor)` (web addresses and mail aside) must name an existing file or
directory relative to the document; its anchor, or a bare `#anchor`, must be a heading of the
target Markdown file under GitHub's rule: lowercase, punctuation dropped except '-' and '_',
spaces to '-', and a repeated heading's slug suffixed -1, -2, ...
"""
import re
import sys
import tempfile
from pathlib import Path

LINK = re.compile(r"(?<!!)\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)\)")


def slug(heading):
    """GitHub's anchor of a heading's text."""
    text = re.sub(r"`|\*\*|__", "", heading.strip())
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link in a heading keeps its text
    text = text.lower()
    text = re.sub(r"[^\w\- ]", "", text)  # \w: letters, digits and '_' (Unicode included)
    return text.replace(" ", "-")


def prose_lines(text):
    """The lines outside fenced code blocks (links and headings in code are not links)."""
    fenced = False
    for line in text.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if not fenced:
            yield line


def anchors(path, cache={}):
    if path not in cache:
        seen, out = {}, set()
        for line in prose_lines(path.read_text(encoding="utf-8")):
            m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
            if m:
                s = slug(m.group(1))
                n = seen.get(s, 0)
                seen[s] = n + 1
                out.add(s if n == 0 else f"{s}-{n}")
            out.update(re.findall(r"<a\s+(?:name|id)=[\"']([^\"']+)[\"']", line))
        cache[path] = out
    return cache[path]


def check(repo):
    repo = Path(repo)
    docs = [repo / "README.md"] + sorted((repo / "docs").glob("*.md"))
    broken, count = [], 0
    for doc in docs:
        for n, line in enumerate(prose_lines(doc.read_text(encoding="utf-8")), 1):
            # Inline code is not a link.
            line = re.sub(r"`[^`]*`", "", line)
            for target in LINK.findall(line) + IMAGE.findall(line):
                if re.match(r"[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):
                    continue  # https:, mailto:, file: ...
                count += 1
                path_part, _, anchor = target.partition("#")
                dest = (doc.parent / path_part).resolve() if path_part else doc
                where = f"{doc.relative_to(repo)}: ({target})"
                if not dest.exists():
                    broken.append(f"{where}: no file {path_part}")
                    continue
                if anchor:
                    if dest.is_dir() or dest.suffix.lower() != ".md":
                        broken.append(f"{where}: an anchor into {path_part}, which is not a Markdown file")
                    elif anchor not in anchors(dest):
                        broken.append(f"{where}: no heading '#{anchor}' in {dest.relative_to(repo)}")
    return broken, count


def self_test():
    assert slug("Per arm: the TRAC-IK protocol (10 000 targets per arm)") == \
        "per-arm-the-trac-ik-protocol-10-000-targets-per-arm"
    assert slug("The batch path (`ikbench/solvers/batch.h`)") == "the-batch-path-ikbenchsolversbatchh"
    assert slug("`run.json`") == "runjson"
    assert slug("A second machine: a 2-vCPU AMD EPYC (Zen 5) VM") == "a-second-machine-a-2-vcpu-amd-epyc-zen-5-vm"
    assert slug("snake_case and µs") == "snake_case-and-µs"
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        (d / "docs").mkdir()
        (d / "README.md").write_text("# Top\n## Same\n## Same\n[ok](docs/a.md#a-b) [ok2](#same-1) "
                                     "[web](https://x.org/#nothing) `[code](nowhere.md)`\n"
                                     "```\n[in a block](nowhere.md)\n```\n", encoding="utf-8")
        (d / "docs" / "a.md").write_text("# A, b!\n[up](../README.md#top) [bad](../README.md#same-2) "
                                         "[gone](b.md) [gone2](a.md#nope)\n", encoding="utf-8")
        broken, count = check(d)
        assert count == 6, count
        assert len(broken) == 3 and any("#same-2" in b for b in broken) and any("no file b.md" in b for b in broken) \
            and any("'#nope'" in b for b in broken), broken
    print("self-test passed")
    return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    broken, count = check(argv[1])
    for b in broken:
        print(b)
    print(f"{count} relative links checked, {len(broken)} broken")
    return 1 if broken or count == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
