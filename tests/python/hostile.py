"""Damaged and hostile results directories, each made from one small valid run (synth.make_run,
written as shard 1 of 1 so that `ikbench merge` takes it too), for the tests of every reader
(tests/python/test_hostile_results.py).

A case is a name, the file its error must name (None: a valid directory that every reader must
read) and a function that damages a copy of the valid run (`good`, or `good-scene`, the same run
posed in a scene: synth.planar_scene). Where a case changes a file's content, the manifest in
run.json is rewritten to match, so that the content itself is what a reader must refuse (a stale
manifest is a case of its own). A case may name `cpp_gaps`: the C++ commands (verify, merge) that
do not yet refuse it, and what they should do; tests/python/test_hostile_results.py holds them to
it (an expected failure that turns into an error once the C++ reader refuses the case).

    python3 hostile.py make OUT_DIR                  every case as OUT_DIR/<case> (to try a reader by hand)
    python3 hostile.py check ROOT OUT [CASE...]      runs every Python reader on ROOT/<case> (every case
                                                     of ROOT by default), one JSON line per case

`check` runs, for each case, results.load (and reads the run's traces) and the command line's
verify, summary, compare (the case against ROOT/good) and report (writing into OUT/<case>) in
this process, and prints "start CASE" before and "done CASE {json}" after: per reader the exit
status (or the error of results.load) and what went to stderr. An exception that escapes a reader
is printed as {"exception": traceback}, so the test can tell a clean refusal from a crash, and a
case that never prints "done" is one that hangs.
"""

import contextlib
import io
import json
import os
import shutil
import sys
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent.parent / "python"), str(HERE)]

import synth  # noqa: E402

PROBLEMS = 6
MIB = 1 << 20


READERS = ("load", "verify", "summary", "compare", "report")


class Case:
    def __init__(self, name, names, damage, readers=READERS, base="good", cpp_gaps=None):
        self.name, self.names, self.damage = name, names, damage
        self.readers = readers  # the readers that read what the case damages (the others read it correctly)
        self.base = base        # the valid run the case damages a copy of
        self.cpp_gaps = dict(cpp_gaps or {})  # {C++ command: what it should do and does not yet}

    def __repr__(self):
        return self.name


CASES = []


def case(name, names, readers=READERS, base="good", cpp_gaps=None):
    """Registers `damage(directory)` as a case whose error must name the file `names` (None: a
    valid directory) in every reader of `readers`."""
    def register(damage):
        CASES.append(Case(name, names, damage, readers, base, cpp_gaps))
        return damage
    return register


# ---------------------------------------------------------------- editing a run

def make_valid(directory, scene=False):
    return synth.make_run(directory, problems=PROBLEMS, run_json_extra={"shard": {"index": 1, "count": 1}},
                          scene=scene)


def run_json(d):
    return json.loads((d / "run.json").read_text())


def write_run_json(d, meta):
    (d / "run.json").write_text(json.dumps(meta, indent=2) + "\n")  # NaN stays NaN (not JSON)


def edit_run_json(d, fn):
    meta = run_json(d)
    fn(meta)
    write_run_json(d, meta)


def rewrite(d, name, data, manifest=True):
    """Replaces a file of the run; with `manifest`, run.json's entry follows (an honest edit)."""
    (d / name).write_bytes(data)
    if manifest:
        meta = run_json(d)
        meta["files"][name] = synth.manifest_entry(name, data)
        write_run_json(d, meta)


def lines(d, name):
    return (d / name).read_bytes().split(b"\n")


def edit_lines(d, name, fn, manifest=True):
    ls = lines(d, name)
    fn(ls)
    rewrite(d, name, b"\n".join(ls), manifest)


def edit_solves_cell(d, row, column, value):
    """Row `row` (0 = first data row) of solves.csv gets `value` in `column` (bytes)."""
    header = lines(d, "solves.csv")[0].split(b",")
    k = header.index(column.encode())

    def fn(ls):
        cells = ls[1 + row].split(b",")
        cells[k] = value
        ls[1 + row] = b",".join(cells)
    edit_lines(d, "solves.csv", fn)


def first_attempted_row(d):
    """Index of the first solves.csv row with a configuration q."""
    header = lines(d, "solves.csv")[0].split(b",")
    k = header.index(b"q")
    for i, ln in enumerate(lines(d, "solves.csv")[1:]):
        if ln and ln.split(b",")[k].strip():
            return i
    raise AssertionError("no solve with a configuration")


def edit_model(d, fn):
    doc = json.loads((d / "models.json").read_text())
    fn(doc["models"][0])
    rewrite(d, "models.json", (json.dumps(doc, indent=1) + "\n").encode())


def edit_problem(d, index, fn):
    def edit(ls):
        rec = json.loads(ls[index])
        fn(rec)
        ls[index] = json.dumps(rec).encode()
    edit_lines(d, "problems.jsonl", edit)


def replace_with_fifo(d, name):
    (d / name).unlink()
    os.mkfifo(d / name)


def replace_with_link(d, name, target):
    (d / name).unlink()
    os.symlink(target, d / name)


# ---------------------------------------------------------------- the cases

@case("valid", None)
def _valid(d):
    pass


@case("valid-solves-linked-to-a-regular-file", None)
def _linked(d):
    elsewhere = d.parent / (d.name + "-solves.csv")
    shutil.copy(d / "solves.csv", elsewhere)
    replace_with_link(d, "solves.csv", elsewhere)


@case("integer-of-5000-digits-in-run-json", "run.json")
def _big_int(d):
    text = (d / "run.json").read_text()
    (d / "run.json").write_text(text.replace('"run_id":', '"extra_number": 1' + "0" * 5000 + ', "run_id":', 1))


@case("truncated-solves", "solves.csv")
def _truncated(d):
    data = (d / "solves.csv").read_bytes()
    rewrite(d, "solves.csv", data[:len(data) - 40])


@case("truncated-solves-stale-manifest", "solves.csv")
def _truncated_stale(d):
    data = (d / "solves.csv").read_bytes()
    rewrite(d, "solves.csv", data[:len(data) - 40], manifest=False)


@case("empty-solves", "solves.csv")
def _empty(d):
    rewrite(d, "solves.csv", b"")


@case("iterations-not-a-number", "solves.csv")
def _iterations(d):
    edit_solves_cell(d, 0, "iterations", b"many")


@case("problem-with-an-exponent", "solves.csv")
def _exponent(d):
    edit_solves_cell(d, 0, "problem", b"0e0")


@case("unknown-status", "solves.csv")
def _status(d):
    edit_solves_cell(d, 0, "status", b"solved")


@case("solves-not-utf8", "solves.csv")
def _utf8(d):
    edit_solves_cell(d, 0, "message", b"\xff\xfe")


@case("q-too-long", "solves.csv")
def _q_long(d):
    edit_solves_cell(d, first_attempted_row(d), "q", b"0.1 0.2 0.3")


@case("q-too-short", "solves.csv")
def _q_short(d):
    edit_solves_cell(d, first_attempted_row(d), "q", b"0.1")


@case("q-not-a-number", "solves.csv")
def _q_text(d):
    edit_solves_cell(d, first_attempted_row(d), "q", b"0.1 abc")


@case("q-with-an-underscore", "solves.csv")
def _q_underscore(d):
    edit_solves_cell(d, first_attempted_row(d), "q", b"0.1 1_0")


@case("q-in-hexadecimal", "solves.csv")
def _q_hex(d):
    edit_solves_cell(d, first_attempted_row(d), "q", b"0.1 0x1p-2")


@case("huge-q-field", "solves.csv")
def _huge_field(d):
    edit_solves_cell(d, first_attempted_row(d), "q", b"0.1 " * (17 * MIB))  # a 68 MiB line


@case("duplicate-solve-row", "solves.csv")
def _dup_row(d):
    edit_lines(d, "solves.csv", lambda ls: ls.insert(2, ls[1]))


@case("family-not-in-run-json", "solves.csv")
def _family(d):
    edit_solves_cell(d, 0, "family", b"planar-nowhere")


@case("solver-not-in-run-json", "solves.csv")
def _solver(d):
    edit_solves_cell(d, 0, "solver", b"dls:lambda=7")


@case("problem-beyond-the-familys-count", "solves.csv")
def _beyond(d):
    edit_solves_cell(d, 0, "problem", str(PROBLEMS + 5).encode())


@case("solution-q-of-the-wrong-length", "solutions.csv")
def _solution_q(d):
    header = lines(d, "solves.csv")[0].split(b",")
    row = lines(d, "solves.csv")[1 + first_attempted_row(d)].split(b",")
    fam, prob, spec = (row[header.index(c)].decode() for c in (b"family", b"problem", b"solver"))
    text = (d / "solutions.csv").read_text() + f"{fam},{prob},{spec},0,0.1 0.2\n{fam},{prob},{spec},1,0.1 0.2 0.3\n"
    rewrite(d, "solutions.csv", text.encode())


@case("duplicate-solution", "solutions.csv")
def _dup_solution(d):
    header = lines(d, "solves.csv")[0].split(b",")
    row = lines(d, "solves.csv")[1 + first_attempted_row(d)].split(b",")
    fam, prob, spec = (row[header.index(c)].decode() for c in (b"family", b"problem", b"solver"))
    text = (d / "solutions.csv").read_text() + f"{fam},{prob},{spec},0,0.1 0.2\n" * 2
    rewrite(d, "solutions.csv", text.encode())


# traces.csv is read when a reader uses the traces (Run.traces: the report), not by verify,
# summary or compare, which read the correct result from the other files.
@case("trace-q-of-the-wrong-length", "traces.csv", readers=("load", "report"))
def _trace_q(d):
    def fn(ls):
        cells = ls[1].split(b",")
        cells[-1] = b"0.1 0.2 0.3"
        ls[1] = b",".join(cells)
    edit_lines(d, "traces.csv", fn)


@case("body-index-out-of-range", "problems.jsonl")
def _body(d):
    edit_problem(d, 0, lambda r: r["goals"][0].update(body_index=99))


@case("problem-index-outside-the-family", "problems.jsonl")
def _problem_index(d):
    edit_problem(d, 0, lambda r: r.update(problem=10 ** 6))


@case("duplicate-problem", "problems.jsonl")
def _dup_problem(d):
    edit_lines(d, "problems.jsonl", lambda ls: ls.insert(1, ls[0]))


@case("nan-in-a-problem", "problems.jsonl")
def _nan_problem(d):
    def fn(ls):
        ls[0] = ls[0].replace(b'"point": [0.0, 0.0, 0.0]', b'"point": [NaN, 0.0, 0.0]', 1)
    edit_lines(d, "problems.jsonl", fn)


@case("problems-deep-nesting", "problems.jsonl")
def _deep_problem(d):
    def fn(ls):
        ls[0] = ls[0][:-1] + b', "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    edit_lines(d, "problems.jsonl", fn)


@case("idx-q-out-of-range", "models.json")
def _idx_q(d):
    edit_model(d, lambda m: m["joints"][1].update(idx_q=5))


@case("parent-out-of-range", "models.json")
def _parent(d):
    edit_model(d, lambda m: m["joints"][1].update(parent=7))


@case("nq-not-the-joints-sum", "models.json")
def _nq(d):
    edit_model(d, lambda m: m.update(nq=3))


@case("models-deep-nesting", "models.json")
def _deep_models(d):
    rewrite(d, "models.json", b"[" * 100_000 + b"]" * 100_000)


@case("models-linked-to-dev-zero", "models.json")
def _models_zero(d):
    replace_with_link(d, "models.json", "/dev/zero")


@case("number-beyond-a-double-in-models", "models.json")
def _big_float(d):
    edit_model(d, lambda m: m["joints"][0]["parent_T_joint"].update(xyz=[0, 0, "BIG"]))
    data = (d / "models.json").read_bytes().replace(b'"BIG"', b"1e400")
    rewrite(d, "models.json", data)


@case("nan-position-tolerance", "run.json")
def _nan_tol(d):
    edit_run_json(d, lambda m: m["suite"]["options"].update(position_tolerance_m=float("nan")))


@case("negative-orientation-tolerance", "run.json")
def _neg_tol(d):
    edit_run_json(d, lambda m: m["suite"]["options"].update(orientation_tolerance_rad=-1e-5))


@case("zero-position-tolerance", "run.json")
def _zero_tol(d):
    edit_run_json(d, lambda m: m["suite"]["options"].update(position_tolerance_m=0))


@case("tolerance-as-text", "run.json")
def _text_tol(d):
    edit_run_json(d, lambda m: m["suite"]["options"].update(position_tolerance_m="1e-5"))


@case("missing-tolerance", "run.json")
def _missing_tol(d):
    edit_run_json(d, lambda m: m["suite"]["options"].pop("orientation_tolerance_rad"))


@case("files-an-empty-list", "run.json")
def _files_list(d):
    edit_run_json(d, lambda m: m.update(files=[]))


@case("files-an-empty-object", "run.json")
def _files_empty(d):
    edit_run_json(d, lambda m: m.update(files={}))


@case("manifest-names-dev-zero", "run.json")
def _manifest_dev(d):
    edit_run_json(d, lambda m: m["files"].update({"/dev/zero": {"rows": 0, "bytes": 0, "fnv1a64": "0" * 16}}))


@case("manifest-names-a-parent-directory", "run.json")
def _manifest_dotdot(d):
    edit_run_json(d, lambda m: m["files"].update({"../elsewhere/solves.csv": dict(m["files"]["solves.csv"])}))


@case("manifest-names-a-path", "run.json")
def _manifest_slash(d):
    edit_run_json(d, lambda m: m["files"].update({"sub/solves.csv": dict(m["files"]["solves.csv"])}))


@case("manifest-bytes-as-text", "run.json")
def _manifest_bytes(d):
    edit_run_json(d, lambda m: m["files"]["solves.csv"].update(bytes=str(m["files"]["solves.csv"]["bytes"])))


@case("manifest-without-traces", "run.json")
def _manifest_short(d):
    edit_run_json(d, lambda m: m["files"].pop("traces.csv"))


@case("complete-as-text", "run.json")
def _complete_text(d):
    edit_run_json(d, lambda m: m.update(complete="yes"))


@case("two-families-of-one-name", "run.json")
def _dup_family(d):
    edit_run_json(d, lambda m: m["families"].append(dict(m["families"][0])))


@case("shard-count-zero", "run.json")
def _shard(d):
    edit_run_json(d, lambda m: m.update(shard={"index": 1, "count": 0}))


@case("run-json-deep-nesting", "run.json")
def _deep_run(d):
    (d / "run.json").write_bytes(b"[" * 100_000 + b"]" * 100_000)


@case("run-json-larger-than-the-limit", "run.json")
def _large_run(d):
    with open(d / "run.json", "r+b") as f:  # sparse: 65 MiB that occupy no disk
        f.truncate(65 * MIB)


@case("run-json-a-fifo", "run.json")
def _fifo_run(d):
    replace_with_fifo(d, "run.json")


@case("run-json-linked-to-dev-zero", "run.json")
def _zero_run(d):
    replace_with_link(d, "run.json", "/dev/zero")


@case("solves-a-fifo", "solves.csv")
def _fifo_solves(d):
    replace_with_fifo(d, "solves.csv")


@case("solves-a-directory", "solves.csv")
def _dir_solves(d):
    (d / "solves.csv").unlink()
    (d / "solves.csv").mkdir()


@case("traces-a-fifo", "traces.csv")
def _fifo_traces(d):
    replace_with_fifo(d, "traces.csv")


@case("traces-linked-to-dev-zero", "traces.csv")
def _zero_traces(d):
    replace_with_link(d, "traces.csv", "/dev/zero")


# ---------------------------------------------------------------- what the C++ readers refuse
# Cases of rules the C++ readers (benchmarks/harness/results_reader.cpp, results_format.cpp and the
# kinematics and collision checks they call) apply and the Python reader mirrors
# (ikbench.io.results_schema, ikbench.io.results_models); the valid ones are files both accept.



def with_crlf(name):
    def damage(d):
        rewrite(d, name, (d / name).read_bytes().replace(b"\n", b"\r\n"))
    return damage


case("format-version-99", "run.json")(lambda d: edit_run_json(d, lambda m: m.update(format_version=99)))
case("format-version-as-text", "run.json")(lambda d: edit_run_json(d, lambda m: m.update(format_version="2")))
case("format-version-missing", "run.json")(lambda d: edit_run_json(d, lambda m: m.pop("format_version")))
case("crlf-solves", "solves.csv")(with_crlf("solves.csv"))
case("crlf-solutions", "solutions.csv")(with_crlf("solutions.csv"))
case("crlf-traces", "traces.csv", readers=("load", "report"))(with_crlf("traces.csv"))
case("valid-crlf-problems", None)(with_crlf("problems.jsonl"))    # '\r' is JSON whitespace
case("valid-crlf-models", None)(with_crlf("models.json"))


@case("blank-line-in-solves", "solves.csv")
def _blank_solves(d):
    edit_lines(d, "solves.csv", lambda ls: ls.insert(3, b""))


@case("blank-line-in-problems", "problems.jsonl")
def _blank_problems(d):
    edit_lines(d, "problems.jsonl", lambda ls: ls.insert(2, b""))


@case("iterations-with-an-underscore", "solves.csv")
def _underscore(d):
    edit_solves_cell(d, 0, "iterations", b"1_0")


@case("error-with-a-tab", "solves.csv")
def _tab(d):
    edit_solves_cell(d, 0, "position_error", b"0.5\t")


@case("q-with-a-tab", "solves.csv")
def _q_tab(d):
    edit_solves_cell(d, first_attempted_row(d), "q", b"0.1\t0.2")


@case("valid-count-written-as-a-decimal", None)
def _count_decimal(d):
    edit_solves_cell(d, 0, "iterations", lines(d, "solves.csv")[1].split(b",")[9] + b".0")


@case("valid-cells-padded-with-spaces", None)
def _padded(d):
    edit_solves_cell(d, 0, "suite", b" synthetic ")
    edit_solves_cell(d, 0, "restarts", b" 0 ")


@case("valid-seed-with-leading-zeros", None)
def _seed_zeros(d):
    edit_solves_cell(d, 0, "seed", b"0" * 20 + b"1000")


@case("problem-index-of-eleven-digits", "solves.csv")
def _index_digits(d):
    edit_solves_cell(d, 0, "problem", b"0" * 11)


@case("unknown-column-in-solves", "solves.csv")
def _unknown_column(d):
    edit_lines(d, "solves.csv", lambda ls: ls.__setitem__(slice(None), [ln + (b",extra" if i == 0 else b",1") if ln else ln
                                                                      for i, ln in enumerate(ls)]))


@case("solves-columns-reordered", "solves.csv")
def _reordered(d):
    def fn(ls):
        for i, ln in enumerate(ls):
            if ln:
                c = ln.split(b",")
                c[3], c[4] = c[4], c[3]
                ls[i] = b",".join(c)
    edit_lines(d, "solves.csv", fn)


@case("text-after-a-quoted-field", "solves.csv")
def _after_quote(d):
    edit_solves_cell(d, 0, "message", b'"ab"c')


@case("quoted-field-across-lines", "solves.csv")
def _across_lines(d):
    edit_solves_cell(d, 0, "message", b'"a\nb"')


@case("solve-row-missing", "solves.csv", cpp_gaps={"merge": "name solves.csv when a run lacks a solve"})
def _row_missing(d):
    edit_lines(d, "solves.csv", lambda ls: ls.pop(2))


@case("q-not-finite", "solves.csv")
def _q_nan(d):
    edit_solves_cell(d, first_attempted_row(d), "q", b"nan 0.1")


@case("solution-q-infinite", "solutions.csv")
def _solution_inf(d):
    header = lines(d, "solves.csv")[0].split(b",")
    row = lines(d, "solves.csv")[1 + first_attempted_row(d)].split(b",")
    fam, prob, spec = (row[header.index(c)].decode() for c in (b"family", b"problem", b"solver"))
    text = (d / "solutions.csv").read_text() + f"{fam},{prob},{spec},0,0.1 0.2\n{fam},{prob},{spec},1,inf 0.2\n"
    rewrite(d, "solutions.csv", text.encode())


@case("valid-q-not-finite-of-an-unsupported-solve", None)
def _unsupported_nan(d):
    header = lines(d, "solves.csv")[0].split(b",")
    row = next(i for i, ln in enumerate(lines(d, "solves.csv")[1:]) if b",unsupported," in ln)
    edit_solves_cell(d, row, "q", b"nan nan")


@case("valid-q-not-finite-in-traces", None)
def _trace_nan(d):
    def fn(ls):
        cells = ls[2].split(b",")
        cells[-1] = b"nan 0.5"
        ls[2] = b",".join(cells)
    edit_lines(d, "traces.csv", fn)


@case("problem-missing", "problems.jsonl", cpp_gaps={"merge": "refuse a problems.jsonl without every problem of the "
                                                              "run, as verify does"})
def _problem_missing(d):
    edit_lines(d, "problems.jsonl", lambda ls: ls.pop(PROBLEMS + 2))


@case("problem-without-goals", "problems.jsonl")
def _no_goals(d):
    edit_problem(d, 0, lambda r: r.update(goals=[]))


@case("goal-weight-zero", "problems.jsonl")
def _goal_weight(d):
    edit_problem(d, 1, lambda r: r["goals"][0].update(weight=0))


@case("goal-without-its-body", "problems.jsonl")
def _goal_body(d):
    edit_problem(d, 1, lambda r: r["goals"][0].pop("body"))


@case("position-goal-quaternion-not-unit", "problems.jsonl")
def _goal_quat(d):
    edit_problem(d, 0, lambda r: r["goals"][0].update(target_quat_xyzw=[0, 0, 0, 2]))


@case("joint-lower-above-upper", "models.json")
def _lower_upper(d):
    edit_model(d, lambda m: m["joints"][0].update(lower=[1.0], upper=[-1.0]))


@case("joint-weight-zero", "models.json")
def _joint_weight(d):
    edit_model(d, lambda m: m["joints"][1].update(weight=[0]))


@case("two-joints-of-one-name", "models.json")
def _joint_names(d):
    edit_model(d, lambda m: m["joints"][1].update(name="j0"))


# ---- scenes

def edit_scene(d, fn):
    edit_model(d, lambda m: fn(m["scene"]))


@case("valid-scene", None, base="good-scene")
def _valid_scene(d):
    pass


@case("pair-names-an-unknown-obstacle", "models.json", base="good-scene")
def _pair_obstacle(d):
    edit_scene(d, lambda s: s["pairs"].__setitem__(0, [0, 99999, "obstacle"]))


@case("pairs-leave-out-a-checked-pair", "models.json", base="good-scene")
def _pair_missing(d):
    edit_scene(d, lambda s: s["pairs"].pop(1))


@case("scene-sphere-of-negative-radius", "models.json", base="good-scene")
def _sphere_radius(d):
    edit_scene(d, lambda s: s["obstacles"][0].update(radius=-0.2))


@case("scene-obstacle-beyond-1e6-m", "models.json", base="good-scene")
def _far_obstacle(d):
    edit_scene(d, lambda s: s["obstacles"][0].update(xyz=[0.0, 0.0, 3e6]))


@case("scene-disabled-pair-of-unknown-names", "models.json", base="good-scene")
def _disabled_unknown(d):
    edit_scene(d, lambda s: s["disabled_pairs"].append(["link1", "nowhere"]))


@case("scene-link-on-an-unknown-body", "models.json", base="good-scene")
def _link_body(d):
    edit_scene(d, lambda s: s["links"][1].update(body="wing"))


@case("scene-fitted-not-a-flag", "models.json", base="good-scene")
def _fitted(d):
    edit_scene(d, lambda s: s["links"][0].update(fitted="yes"))


@case("valid-scene-with-reasons-and-coverage", None, base="good-scene")
def _valid_reasons(d):
    edit_scene(d, lambda s: s.update(disabled_reasons=["adjacent", "adjacent"],
                                     coverage={"links": {"link1": "capsule r=0.05 l=0.8"}, "uncovered": [],
                                               "overlap_at_rest": [], "flagged": False}))


def _with_tip_shape(s, excluded=None, also_checked=False):
    """A third link shape, on the tip (not a neighbour of link1): its pair with link1's shape is left
    out on its own (excluded_pairs) rather than checked."""
    tip = dict(s["links"][1], name="tip", body="tip")
    s["links"].append(tip)
    s["pairs"].append([2, 0, "obstacle"])
    if also_checked:
        s["pairs"].append([0, 2, "link"])
    if excluded is not None:
        s["excluded_pairs"] = excluded


@case("valid-scene-with-an-excluded-shape-pair", None, base="good-scene")
def _valid_excluded(d):
    edit_scene(d, lambda s: _with_tip_shape(s, [[0, 2, "overlap_at_rest"]]))


@case("scene-leaves-out-a-shape-pair-not-excluded", "models.json", base="good-scene")
def _excluded_missing(d):
    edit_scene(d, lambda s: _with_tip_shape(s))


@case("scene-excluded-pair-reason-unknown", "models.json", base="good-scene")
def _excluded_reason(d):
    edit_scene(d, lambda s: _with_tip_shape(s, [[0, 2, "adjacent"]]))


@case("scene-excluded-pair-also-checked", "models.json", base="good-scene")
def _excluded_checked(d):
    edit_scene(d, lambda s: _with_tip_shape(s, [[0, 2, "overlap_at_rest"]], also_checked=True))


@case("scene-excluded-pair-of-one-link", "models.json", base="good-scene")
def _excluded_one_link(d):
    edit_scene(d, lambda s: _with_tip_shape(s, [[0, 2, "overlap_at_rest"], [2, 2, "overlap_at_rest"]]))


@case("scene-disabled-reason-unknown", "models.json", base="good-scene")
def _reason_unknown(d):
    edit_scene(d, lambda s: s.update(disabled_reasons=["adjacent", "because"]))


@case("scene-disabled-reasons-one-short", "models.json", base="good-scene")
def _reasons_short(d):
    edit_scene(d, lambda s: s.update(disabled_reasons=["adjacent"]))


@case("scene-coverage-not-an-object", "models.json", base="good-scene")
def _coverage_list(d):
    edit_scene(d, lambda s: s.update(coverage=[]))


# ---------------------------------------------------------------- compressed files

def compress(d, name, data=None, rows_of=None):
    """The run's NAME replaced by NAME.gz holding `data` (default: gzip of NAME's content), with
    an honest manifest entry under the new name; its rows are those of `rows_of` (default: the
    content)."""
    import gzip

    content = (d / name).read_bytes()
    (d / name).unlink()
    data = gzip.compress(content, mtime=0) if data is None else data
    (d / (name + ".gz")).write_bytes(data)
    meta = run_json(d)
    meta["files"].pop(name, None)
    entry = synth.manifest_entry(name, content if rows_of is None else rows_of)
    entry.update(bytes=len(data), fnv1a64=synth.fnv1a64(data))
    meta["files"][name + ".gz"] = entry
    write_run_json(d, meta)


def gzip_bomb(mib):
    """A gzip stream of `mib` MiB of zeros (about a thousandth of that compressed)."""
    import zlib

    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    zeros = bytes(MIB)
    return b"".join([c.compress(zeros) for _ in range(mib)] + [c.flush()])


RUN_FILES = ("models.json", "problems.jsonl", "solves.csv", "solutions.csv", "traces.csv")


@case("valid-compressed", None)
def _valid_gz(d):
    for name in RUN_FILES:
        compress(d, name)


@case("gzip-bomb-solves", "solves.csv")
def _bomb_solves(d):
    compress(d, "solves.csv", gzip_bomb(300))


@case("gzip-bomb-traces", "traces.csv", readers=("load", "report"))
def _bomb_traces(d):
    compress(d, "traces.csv", gzip_bomb(300))


@case("truncated-gzip-problems", "problems.jsonl")
def _gz_truncated(d):
    import gzip

    data = gzip.compress((d / "problems.jsonl").read_bytes(), mtime=0)
    compress(d, "problems.jsonl", data[:len(data) * 2 // 3], rows_of=(d / "problems.jsonl").read_bytes())


@case("corrupt-gzip-models", "models.json")
def _gz_corrupt(d):
    import gzip

    data = bytearray(gzip.compress((d / "models.json").read_bytes(), mtime=0))
    data[len(data) // 2] ^= 0x55
    compress(d, "models.json", bytes(data), rows_of=(d / "models.json").read_bytes())


@case("plain-and-compressed-solves", "solves.csv")
def _gz_both(d):
    import gzip

    (d / "solves.csv.gz").write_bytes(gzip.compress((d / "solves.csv").read_bytes(), mtime=0))


def make_cases(root):
    """Writes the valid run and every case under `root`; returns ({case name: directory}, the
    valid run's directory)."""
    root = Path(root)
    good = make_valid(root / "good")
    bases = {"good": good, "good-scene": make_valid(root / "good-scene", scene=True)}
    out = {}
    for c in CASES:
        d = root / c.name
        shutil.copytree(bases[c.base], d)
        c.damage(d)
        out[c.name] = d
    return out, good


# ---------------------------------------------------------------- running the Python readers

def _cli(argv):
    from ikbench import cli

    err = io.StringIO()
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            rc = cli.main(argv)
    except SystemExit as e:
        rc = e.code
    except BaseException:
        return {"exception": traceback.format_exc()}
    return {"rc": rc, "stderr": err.getvalue()}


def check(case_dir, good_dir, out_dir):
    from ikbench.io import results

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    report = {}
    try:
        results.load(case_dir).traces  # traces.csv is read on first use
        report["load"] = {"ok": True}
    except results.ResultsError as e:
        report["load"] = {"ok": False, "error": str(e)}
    except BaseException:
        report["load"] = {"exception": traceback.format_exc()}
    report["verify"] = _cli(["verify", str(case_dir)])
    report["summary"] = _cli(["summary", str(case_dir)])
    report["compare"] = _cli(["compare", str(case_dir), str(good_dir)])
    report["report"] = _cli(["report", str(case_dir), "--out", str(out_dir / "report.html")])
    report["report"]["files_left"] = sorted(os.listdir(out_dir))
    return report


def main(argv):
    if argv[:1] == ["make"] and len(argv) == 2:
        cases, good = make_cases(argv[1])
        print(f"{len(cases)} cases in {argv[1]} (valid run: {good})")
        return 0
    if argv[:1] == ["check"] and len(argv) >= 3:
        root, out = Path(argv[1]), Path(argv[2])
        for name in argv[3:] or [c.name for c in CASES]:
            print(f"start {name}", flush=True)
            print(f"done {name} {json.dumps(check(root / name, root / 'good', out / name))}", flush=True)
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
