#!/usr/bin/python3
"""LICENSE is the Apache License 2.0 and CITATION.cff a valid Citation File Format 1.2.0 file for it.

    docs_citation_test.py REPO_DIR          check (exit 0, or 1 naming each problem)
    docs_citation_test.py --self-test       check the CFF rules on files that must and must not pass

CITATION.cff is checked against the rules of CFF 1.2.0 (https://citation-file-format.github.io,
schema.json of that version) that apply to it, as a JSON Schema with jsonschema: the required keys
`cff-version` (1.2.0), `message`, `title` and `authors` (each a person with `family-names` or an
entity with `name`), `type` software or dataset, `license` an SPDX identifier, no unknown top-level
key, and a DOI, where one is given, of the form 10.PREFIX/SUFFIX. The project's own: title ikbench,
type software, the entity "ikbench contributors", licence Apache-2.0 (as LICENSE), no DOI (none
has been registered).
"""
import sys

from pathlib import Path

import jsonschema
import yaml

import docs_check

CFF_KEYS = ["abstract", "authors", "cff-version", "commit", "contact", "date-released", "doi", "identifiers",
            "keywords", "license", "license-url", "message", "preferred-citation", "references", "repository",
            "repository-artifact", "repository-code", "title", "type", "url", "version"]
PERSON_OR_ENTITY = {"anyOf": [
    {"type": "object", "required": ["family-names"], "properties": {"family-names": {"type": "string", "minLength": 1},
                                                                   "given-names": {"type": "string"}}},
    {"type": "object", "required": ["name"], "properties": {"name": {"type": "string", "minLength": 1}}}]}
SCHEMA = {
    "type": "object",
    "required": ["authors", "cff-version", "message", "title"],
    "additionalProperties": False,
    "properties": {**{k: {} for k in CFF_KEYS},
                   "cff-version": {"const": "1.2.0"},
                   "message": {"type": "string", "minLength": 1},
                   "title": {"type": "string", "minLength": 1},
                   "abstract": {"type": "string", "minLength": 1},
                   "authors": {"type": "array", "minItems": 1, "items": PERSON_OR_ENTITY},
                   "type": {"enum": ["dataset", "software"]},
                   "license": {"type": "string", "pattern": r"^[A-Za-z0-9.+-]+$"},
                   "doi": {"type": "string", "pattern": r"^10\.\d{4,9}(\.\d+)?/[A-Za-z0-9:/_;\-\.\(\)\[\]\\]+$"},
                   "keywords": {"type": "array", "items": {"type": "string", "minLength": 1}}},
}


def cff_problems(text):
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as e:
        return [f"not YAML: {e}"]
    v = jsonschema.Draft7Validator(SCHEMA)
    return [f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}" for e in v.iter_errors(doc)]


def check(repo):
    repo = Path(repo)
    bad = []
    lic = (repo / "LICENSE").read_text(encoding="utf-8") if (repo / "LICENSE").is_file() else ""
    for must in ("Apache License", "Version 2.0, January 2004", "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION",
                 "9. Accepting Warranty or Additional Liability.", "END OF TERMS AND CONDITIONS",
                 "APPENDIX: How to apply the Apache License to your work."):
        if must not in lic:
            bad.append(f"LICENSE: the Apache License 2.0's text lacks {must!r}")
    cff_path = repo / "CITATION.cff"
    if not cff_path.is_file():
        return bad + ["CITATION.cff: missing"]
    text = cff_path.read_text(encoding="utf-8")
    bad += [f"CITATION.cff: {p}" for p in cff_problems(text)]
    doc = yaml.safe_load(text) or {}
    expected = {"title": "ikbench", "type": "software", "license": "Apache-2.0",
                "authors": [{"name": "ikbench contributors"}]}
    for k, v in expected.items():
        if doc.get(k) != v:
            bad.append(f"CITATION.cff: {k} is {doc.get(k)!r}, expected {v!r}")
    if "doi" in doc or "identifiers" in doc:
        bad.append("CITATION.cff: a DOI or identifier that was never registered")
    return bad


def self_test():
    good = "cff-version: 1.2.0\nmessage: Cite it.\ntitle: x\nauthors:\n  - name: x contributors\ntype: software\n"
    assert cff_problems(good) == [], cff_problems(good)
    assert cff_problems(good + "license: Apache-2.0\ndoi: 10.5281/zenodo.1234\n") == []
    for broken in (good.replace("1.2.0", "1.1.0"), good.replace("message: Cite it.\n", ""),
                   good.replace("  - name: x contributors\n", "  - {}\n"), good + "type2: x\n",
                   good.replace("software", "program"), good + "doi: 12.34/x\n", "authors: [\n"):
        assert cff_problems(broken), broken
    print("self-test passed")


def main(argv):
    return docs_check.main(argv, __doc__, self_test, check, "problems in LICENSE and CITATION.cff")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
