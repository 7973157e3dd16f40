"""python/ikbench/data/results_format.json, the facts of the results format: the Python reader
takes them from it (ikbench.io.results_schema), and the C++ build generates ikbench/format/schema.h
from it (cmake/results_schema.cmake), which benchmarks/harness/results_format.{h,cpp},
results_reader.cpp and gzip_stream.h take their columns, names and limits from. The facts the
libraries below the harness state (enum tables, tolerances) and the C++ readers' column kinds are
read from their source and compared: a fact changed on one side only fails here, so that both
readers keep accepting and refusing the same files."""
import re

import pytest
from conftest import REPO

from ikbench.io import results
from ikbench.io.results_schema import SCHEMA

HARNESS = REPO / "benchmarks" / "harness"


def _source(path):
    return (REPO / path).read_text(encoding="utf-8")


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


def _generated_header():
    """The C++ header the build generates from the schema (cmake/results_schema.cmake), or None
    before a build."""
    for build in ("release", "debug"):
        path = REPO / "build" / build / "generated" / "ikbench" / "format" / "schema.h"
        if path.is_file():
            return path.read_text(encoding="utf-8")
    return None


def test_cpp_takes_columns_outcomes_files_and_limits_from_the_schema():
    """results_format.cpp, results_format.h and gzip_stream.h state none of these facts themselves:
    each is the generated header's constant, made from this very file."""
    cpp = _source("benchmarks/harness/results_format.cpp")
    for name, generated in (("kSolveColumns", "kSolvesLeadingColumns"), ("kSolveExtraColumns", "kSolvesExtraColumns"),
                            ("kQualityColumns", "kQualityColumns"), ("kCollisionColumns", "kCollisionColumns"),
                            ("kExternalColumns", "kExternalColumns"),
                            ("kTraceColumns", "kTraceColumns"), ("kSolutionColumns", "kSolutionColumns"),
                            ("kTimeColumns", "kTimeColumns"), ("kOutcomeNames", "kOutcomes"),
                            ("kManifestFiles", "kManifestFiles")):
        assert re.search(rf"\b{name} = names\(results_schema::{generated}\);", cpp), name
    h = _source("benchmarks/harness/results_format.h")
    gz = _source("benchmarks/harness/gzip_stream.h")
    for text, name, generated in ((h, "kFormatVersion", "kFormatVersion"), (h, "kMaxRunJsonBytes", "kMaxRunJsonBytes"),
                                  (h, "kMaxModelsJsonBytes", "kMaxModelsJsonBytes"), (h, "kMaxLineBytes", "kMaxLineBytes"),
                                  (h, "kMaxResultsJsonNesting", "kMaxJsonNesting"), (gz, "kGzipSuffix", "kGzipSuffix"),
                                  (gz, "kMaxGzipRatio", "kMaxGzipRatio"), (gz, "kGzipFloorBytes", "kGzipFloorBytes")):
        assert re.search(rf"\b{name} = results_schema::{generated};", text), name
    reader = _source("benchmarks/harness/results_reader.cpp")
    assert "results_schema::kMaxFamilyProblems" in reader and "results_schema::kMaxShardCount" in reader
    assert results.SOLVE_COLUMNS == SCHEMA["columns"]["solves_leading"] + SCHEMA["columns"]["solves_extra"]


def test_the_generated_header_states_the_schema():
    """The header a build made holds this file's lists and limits (it is regenerated when the file
    changes: the configuration depends on it)."""
    text = _generated_header()
    if text is None:
        pytest.skip("no build has generated ikbench/format/schema.h yet (build/release or build/debug)")

    def names(name):
        m = re.search(rf"std::array<std::string_view, (\d+)> {name} = \{{(.*?)\}};", text)
        assert m, name
        got = re.findall(r'"([^"]*)"', m.group(2))
        assert len(got) == int(m.group(1))
        return got

    def number(name):
        return float(re.search(rf"\b{name} = ([^;]+);", text).group(1))

    cols = SCHEMA["columns"]
    assert names("kSolvesLeadingColumns") == cols["solves_leading"]
    assert names("kSolvesExtraColumns") == cols["solves_extra"]
    assert names("kQualityColumns") == cols["quality"]
    assert names("kCollisionColumns") == cols["collision"]
    assert names("kExternalColumns") == cols["external"]
    assert names("kTraceColumns") == cols["traces"]
    assert names("kSolutionColumns") == cols["solutions"]
    assert names("kTimeColumns") == cols["time"]
    assert names("kOutcomes") == SCHEMA["outcomes"]
    assert names("kManifestFiles") == SCHEMA["manifest_files"]
    assert names("kStatuses") == SCHEMA["statuses"]
    assert number("kFormatVersion") == SCHEMA["format_version"]
    assert re.search(r'kFormat = "([^"]*)"', text).group(1) == SCHEMA["format"]
    limits = SCHEMA["limits"]
    for name, key in (("kMaxRunJsonBytes", "max_run_json_bytes"), ("kMaxModelsJsonBytes", "max_models_json_bytes"),
                      ("kMaxLineBytes", "max_line_bytes"), ("kMaxJsonNesting", "max_json_nesting"),
                      ("kMaxGzipRatio", "max_gzip_ratio"), ("kGzipFloorBytes", "gzip_floor_bytes"),
                      ("kMaxFamilyProblems", "max_family_problems"), ("kMaxShardCount", "max_shard_count")):
        assert number(name) == limits[key], name


def test_other_limits_are_the_cpp_constants():
    """The facts of the schema that libraries below the harness state (they are built before the
    header is generated for the harness): checked against their source."""
    limits = SCHEMA["limits"]
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
