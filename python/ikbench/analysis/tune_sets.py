"""The sets of `ikbench tune`: SUITE[@SEED][:FAMILY,...] items joined by '+', the suite file each
item runs, and what two sets share (families by name and seed, problems and models by their
content). Returns data; writes only the suite copies a run needs."""

import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..io.results import ResultsError, read_json_file
from ..io.safe_io import atomic_write_text, output_directory
from .tune_criterion import TuneError


@dataclass
class Item:
    text: str
    suite_file: Path
    suite_name: str
    seed: int
    seed_given: bool
    families: list            # selected family names (all when none were selected)
    selected: bool            # families were selected
    family_defs: dict         # name -> family JSON object of the suite file


def data_directory():
    """The shipped data directory as `ikbench` finds it: $IKBENCH_DATA_DIR, else this source
    tree's scenarios/data."""
    env = os.environ.get("IKBENCH_DATA_DIR")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[3] / "scenarios" / "data"


def _suite_path(name):
    p = Path(name)
    if p.suffix == ".json" or "/" in name or p.exists():
        if not p.is_file():
            raise TuneError(f"suite file '{name}' not found")
        return p.resolve()
    cand = data_directory() / "suites" / f"{name}.json"
    if cand.is_file():
        return cand.resolve()
    shipped = sorted(x.stem for x in (data_directory() / "suites").glob("*.json"))
    raise TuneError(f"unknown suite '{name}' (shipped suites in {data_directory() / 'suites'}: "
                    f"{', '.join(shipped) or 'none'}; or give a path to a .json file)")


def parse_item(text, what):
    raw = text.strip()
    if not raw:
        raise TuneError(f"{what}: empty item (expected SUITE[@SEED][:FAMILY,...])")
    head, fams = raw, None
    # SUITE[:FAMILIES]: the last ':' that is not part of a path
    if ":" in raw:
        i = raw.rindex(":")
        if "/" not in raw[i + 1:]:
            head, fams = raw[:i], raw[i + 1:]
    seed, seed_given = None, False
    if "@" in head:
        head, s = head.rsplit("@", 1)
        if not re.fullmatch(r"\d+", s.strip()) or int(s) >= 2 ** 64:
            raise TuneError(f"{what}: '{raw}': seed '{s}' is not a decimal integer in [0, 2^64 - 1]")
        seed, seed_given = int(s), True
    path = _suite_path(head.strip())
    try:  # a regular file within the readers' bounds (results.read_json_file)
        doc, _ = read_json_file(path, "a suite file")
    except ResultsError as e:
        raise TuneError(f"{what}: '{raw}': cannot read suite file: {e}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("families"), list):
        raise TuneError(f"{what}: '{raw}': {path} is not a suite file (no 'families' list)")
    defs = {}
    for f in doc["families"]:
        if isinstance(f, dict) and isinstance(f.get("name"), str):
            defs[f["name"]] = f
    if seed is None:
        s = doc.get("seed", 0)
        if not isinstance(s, int) or isinstance(s, bool):
            raise TuneError(f"{what}: '{raw}': {path}: 'seed' is not an integer")
        seed = s
    selected = fams is not None
    if selected:
        names = [x.strip() for x in fams.split(",")]
        if any(not n for n in names):
            raise TuneError(f"{what}: '{raw}': empty family name in the list")
        for n in names:
            if n not in defs:
                raise TuneError(f"{what}: '{raw}': suite {path} has no family '{n}' (its families: "
                                f"{', '.join(defs)})")
        if len(set(names)) != len(names):
            raise TuneError(f"{what}: '{raw}': a family is listed twice")
    else:
        names = list(defs)
    name = doc.get("name") if isinstance(doc.get("name"), str) else path.stem
    return Item(raw, path, name, seed, seed_given, names, selected, defs)


def parse_set(text, what):
    """A set: ITEM ('+' ITEM)*, ITEM = SUITE[@SEED][:FAMILY,...]. Family names must be unique
    within the set (its solves are pooled by family)."""
    if text is None or not text.strip():
        raise TuneError(f"{what}: empty (expected SUITE[@SEED][:FAMILY,...] joined by '+')")
    items = [parse_item(t, what) for t in text.split("+")]
    seen = {}
    for it in items:
        for f in it.families:
            if f in seen:
                raise TuneError(f"{what}: family '{f}' is in '{seen[f]}' and in '{it.text}': family names must be "
                                "unique within a set")
            seen[f] = it.text
    return items


def family_keys(items):
    """{(family name, seed)}: a family's problems depend only on these two (and its definition)."""
    return {(f, it.seed) for it in items for f in it.families}


def _resolve_file(value, suite_dir):
    p = Path(value)
    if p.is_absolute():
        return str(p)
    for base in (suite_dir, data_directory()):
        if (base / p).exists():
            return str((base / p).resolve())
    return value


def item_suite_file(item, directory):
    """The suite file `ikbench run` reads for an item: the file itself when every family is run,
    else a copy with the selected families only (same name and seed, so the same problems; data
    files made absolute so that they resolve from the copy's directory)."""
    if not item.selected:
        return item.suite_file
    doc, _ = read_json_file(item.suite_file, "a suite file")
    fams = []
    for f in doc["families"]:
        if isinstance(f, dict) and f.get("name") in item.families:
            f = dict(f)
            if isinstance(f.get("file"), str):
                f["file"] = _resolve_file(f["file"], item.suite_file.parent)
            fams.append(f)
    doc["families"] = fams
    doc.pop("solvers", None)
    output_directory(directory, inputs=[item.suite_file])
    out = directory / f"{_safe(item.suite_name)}-{_digest(json.dumps(item.families))[:8]}.json"
    return atomic_write_text(out, json.dumps(doc, indent=1) + "\n", inputs=[item.suite_file])


def _safe(name):
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name) or "suite"


def _digest(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _canonical(x):
    return json.dumps(x, sort_keys=True, separators=(",", ":"))


def model_fingerprint(model):
    return _digest(_canonical(model.get("joints")))


def problem_fingerprints(run):
    """{fingerprint: (family, problem)} of a run's problems: the model's joints, q0 and goals."""
    if run.problems is None or run.models is None:
        return {}
    mfp = {mid: model_fingerprint(m) for mid, m in run.models.items()}
    out = {}
    for r in run.problems.itertuples(index=False):
        out[_digest(_canonical([mfp.get(r.model), r.q0, r.goals]))] = (r.family, int(r.problem))
    return out


def model_names(run):
    """{fingerprint: (model name, source)} of a run's models."""
    if run.models is None:
        return {}
    return {model_fingerprint(m): (m.get("name"), m.get("source")) for m in run.models.values()}
