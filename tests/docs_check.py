"""The command line the docs checks share (docs_figures_test.py, docs_commits_test.py,
docs_citation_test.py): `CHECK [--self-test] REPO_DIR`, the self-test first when asked, then every
problem of the check printed on a line of its own and their count; exit 0 none, 1 some, 2 a bad
command line, or the check's own skip status."""
import sys


def main(argv, doc, self_test, check, what, skip=None):
    """`check(repo)` -> problems; `skip(repo)` -> (status, why) when the check cannot run there, else None."""
    if argv[1:2] == ["--self-test"]:
        self_test()
        argv = argv[:1] + argv[2:]
    if len(argv) != 2:
        print(doc.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    if skip is not None and (skipped := skip(argv[1])) is not None:
        status, why = skipped
        print(why)
        return status
    bad = check(argv[1])
    for b in bad:
        print(b)
    print(f"{len(bad)} {what}")
    return 1 if bad else 0
