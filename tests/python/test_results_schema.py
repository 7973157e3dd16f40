"""python/ikbench/data/results_format.json, the facts of the results format the Python reader
takes (ikbench.io.results_schema), against the C++ constants that hold the same facts
(benchmarks/harness/results_format.{h,cpp}, results_reader.cpp, gzip_stream.h and the enum tables
of the kinematics, solvers and collision libraries), read from their source: a fact changed on
one side only fails here, so that both readers keep accepting and refusing the same files."""
import re

import pytest
from conftest import REPO

from ikbench.io import results
from ikbench.io.results_schema import SCHEMA

HARNESS = REPO / "benchmarks" / "harness"


def _source(path):
    return (REPO / path).read_text(encoding="utf-8")


def _string_list(text, name):
    """The strings of `NAME = {"a", "b", ...}` (a std::vector<std::string> of the source)."""
    m = re.search(rf"\b{name}\s*=\s*\{{(.*?)\}};", text, re.S)
    assert m, f"{name} not found"
    return re.findall(r'"([^"]*)"', m.group(1))


def _enum_names(text, table):
    """The names of an EnumTable `table` ({Enum::kX, "name"}, ...), in order."""
    m = re.search(rf"\b{table}\{{\{{\{{(.*?)\}}\}}", text, re.S)
    assert m, f"{table} not found"
    return re.findall(r'\{\s*\w+::\w+,\s*"([^"]*)"\s*\}', m.group(1))


def _constant(text, name):
    """The value of `inline constexpr ... NAME = VALUE;` as Python evaluates the C++ expression
    (shifts, digit separators, std::size_t{N})."""
    m = re.search(rf"\b{name}\s*=\s*([^;]+);", text)
    assert m, f"{name} not found"
    expr = re.sub(r"std::size_t\{(\d+)\}", r"\1", m.group(1)).replace("'", "")
    return eval(expr, {})  # a literal expression of the source, not input


def test_columns_outcomes_and_files_are_the_cpp_lists():
    cpp = _source("benchmarks/harness/results_format.cpp")
    cols = SCHEMA["columns"]
    assert _string_list(cpp, "kSolveColumns") == cols["solves_leading"]
    assert _string_list(cpp, "kSolveExtraColumns") == cols["solves_extra"]
    assert _string_list(cpp, "kQualityColumns") == cols["quality"]
    assert _string_list(cpp, "kCollisionColumns") == cols["collision"]
    assert _string_list(cpp, "kTraceColumns") == cols["traces"]
    assert _string_list(cpp, "kSolutionColumns") == cols["solutions"]
    assert _string_list(cpp, "kTimeColumns") == cols["time"]
    assert _string_list(cpp, "kOutcomeNames") == SCHEMA["outcomes"]
    assert _string_list(cpp, "kManifestFiles") == SCHEMA["manifest_files"]
    assert results.SOLVE_COLUMNS == cols["solves_leading"] + cols["solves_extra"]


def test_format_version_and_limits_are_the_cpp_constants():
    h = _source("benchmarks/harness/results_format.h")
    gz = _source("benchmarks/harness/gzip_stream.h")
    limits = SCHEMA["limits"]
    assert _constant(h, "kFormatVersion") == SCHEMA["format_version"]
    assert re.search(r'kFormatName\s*=\s*"([^"]*)"', h).group(1) == f"{SCHEMA['format']}/{SCHEMA['format_version']}"
    assert _constant(h, "kMaxRunJsonBytes") == limits["max_run_json_bytes"]
    assert _constant(h, "kMaxModelsJsonBytes") == limits["max_models_json_bytes"]
    assert _constant(h, "kMaxLineBytes") == limits["max_line_bytes"]
    assert _constant(h, "kMaxResultsJsonNesting") == limits["max_json_nesting"]
    assert _constant(gz, "kMaxGzipRatio") == limits["max_gzip_ratio"]
    assert _constant(gz, "kGzipFloorBytes") == limits["gzip_floor_bytes"]
    reader = _source("benchmarks/harness/results_reader.cpp")
    assert re.search(r'"problems", where, path\), where, path \+ "\.problems", 0, ([0-9\']+)\)', reader) \
        .group(1).replace("'", "") == str(limits["max_family_problems"])
    assert re.search(r'"shard\.count", 1, (\d+)\)', reader).group(1) == str(limits["max_shard_count"])
    assert _constant(_source("core/include/ikbench/core/numeric.h"), "kLimitSlack") == \
        SCHEMA["tolerances"]["limit_slack"]
    world = _source("collision/include/ikbench/collision/world.h")
    if "kMaxShapeExtent" in world:
        assert _constant(world, "kMaxShapeExtent") == limits["max_shape_extent_m"]


def test_names_are_the_cpp_enum_tables():
    assert _enum_names(_source("solvers/include/ikbench/solvers/summary.h"), "kStatusNames") == SCHEMA["statuses"]
    assert _enum_names(_source("kinematics/include/ikbench/kinematics/goal.h"), "kGoalKindNames") == \
        SCHEMA["goal_kinds"]
    assert sorted(_enum_names(_source("kinematics/include/ikbench/kinematics/model.h"), "kJointTypeNames")) == \
        sorted(SCHEMA["joint_types"])
    assert _enum_names(_source("collision/include/ikbench/collision/shapes.h"), "kShapeKindNames") == \
        SCHEMA["shape_types"]


CPP_KINDS = {"kName": "name", "kIndex": "index", "kCount": "count", "kFlag": "flag", "kNumber": "number",
             "kNonNegative": "non_negative", "kMaybeEmpty": "non_negative_or_empty", "kMaybeNumber": "number_or_empty",
             "kMaybeFlag": "flag_or_empty", "kOutcome": "outcome", "kSeed": "seed", "kStatus": "status",
             "kConfig": "configuration"}


def test_column_kinds_are_the_cpp_readers():
    """Every column kind of the C++ checkRows (kindOf) is the schema's, and the reverse."""
    reader = _source("benchmarks/harness/results_reader.cpp")
    body = re.search(r"Kind kindOf\(const std::string& column\) \{(.*?)\n\}", reader, re.S).group(1)
    cpp = {col: CPP_KINDS[kind] for col, kind in re.findall(r'\{"(\w+)",\s*Kind::(\w+)\}', body)}
    assert cpp == SCHEMA["column_kinds"]


@pytest.mark.parametrize("text,ok", [
    ("1", True), ("-1.5e-3", True), ("+.5", True), ("1.", True), ("NaN", True), ("-inf", True),
    ("Infinity", True), ("1e400", True), ("", False), (".", False), ("1e", False), ("1_0", False),
    ("0x1p-2", False), ("\u0663", False), (" 1", False), ("1\t", False), ("in", False), ("nan(1)", False),
])
def test_number_syntax(text, ok):
    """One number syntax, parseResultNumber's: sign, then nan/inf/infinity in any case or decimal
    digits with an optional point and exponent."""
    from ikbench.io.results_schema import is_number

    assert is_number(text) is ok
