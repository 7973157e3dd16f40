#!/usr/bin/python3
"""No two types of the project share a name.

Lists every class and struct the project's C++ sources define (at any nesting) and every class
its Python library and scripts define (python/, scripts/; a test's local helper classes are its
own), and fails, naming the files and lines, when one name is defined twice
within a language. Two unrelated types of one name (a run engine and a lane engine both called
Engine) read as one in code search, in stack traces and in review.

Usage: type_names_check.py [--self-test] [SOURCE_DIR]   (default: the repository holding this file)
"""
import os
import re
import subprocess
import sys

# A definition, not a declaration ("struct Forward;") nor a member's ("struct Outer::Impl {").
CPP_TYPE = re.compile(r"^\s*(?:template\s*<[^>]*>\s*)?(?:class|struct)\s+([A-Z][A-Za-z0-9_]*)\s*(?:final\s*)?(?:\{|:(?!:))",
                      re.M)
PY_TYPE = re.compile(r"^\s*class\s+([A-Z][A-Za-z0-9_]*)\s*[(:]", re.M)


def definitions(text, pattern):
    """(name, line) of every type the text defines."""
    return [(m.group(1), text.count("\n", 0, m.start(1)) + 1) for m in pattern.finditer(text)]


def duplicates(files):
    """{name: [(path, line), ...]} for names defined more than once, per language."""
    seen = {"cpp": {}, "py": {}}
    for path, text in files:
        lang = "py" if path.endswith(".py") else "cpp"
        for name, line in definitions(text, PY_TYPE if lang == "py" else CPP_TYPE):
            seen[lang].setdefault(name, []).append((path, line))
    return {name: places for table in seen.values() for name, places in table.items() if len(places) > 1}


def self_test():
    files = [("a.cpp", "struct Engine {\n};\nclass Plan : public Base {\n};\nstruct Plan::Impl {\n};\n"),
             ("b.cpp", "namespace x {\n  class Engine final {\n  };\n}\nstruct Forward;\n"),
             ("c.py", "class Engine:\n    pass\n"),
             ("d.py", "class Table(object):\n    pass\n")]
    found = duplicates(files)
    assert set(found) == {"Engine"}, found
    assert found["Engine"] == [("a.cpp", 1), ("b.cpp", 2)], found  # a Python class of the same name is another language's
    assert duplicates(files[:1] + files[2:]) == {}


def main(argv):
    args = [a for a in argv if a != "--self-test"]
    if len(args) != len(argv):
        self_test()
    root = args[0] if args else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    listed = subprocess.run(["git", "-C", root, "ls-files", "*.cpp", "*.h", "*.hpp", "*.py"], capture_output=True,
                            text=True)
    if listed.returncode != 0:
        print(f"type_names_check: git ls-files failed in {root}: {listed.stderr.strip()}", file=sys.stderr)
        return 2
    files = []
    for rel in listed.stdout.split():
        if rel.endswith(".py") and not rel.startswith(("python/", "scripts/")):
            continue
        path = os.path.join(root, rel)
        if os.path.isfile(path):
            with open(path, encoding="utf-8", errors="replace") as f:
                files.append((rel, f.read()))
    found = duplicates(files)
    for name, places in sorted(found.items()):
        print(f"type {name} is defined {len(places)} times: " + ", ".join(f"{p}:{l}" for p, l in places))
    print(f"type_names_check: {len(files)} files, {len(found)} names defined twice")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
