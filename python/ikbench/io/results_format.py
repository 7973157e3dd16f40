"""The results format's facts as the reader uses them (docs/results-format.md): the columns of each
CSV file and of format version 1, the names a column may hold, the files of a run's manifest and
the limits of the readers. The shared facts come from python/ikbench/data/results_format.json
(ikbench.io.results_schema), the file the C++ constants are checked against."""

import csv

from .results_schema import LIMITS, SCHEMA


FORMAT_NAME = SCHEMA["format"]
LATEST_VERSION = SCHEMA["format_version"]
_COLUMNS = SCHEMA["columns"]

# solves.csv: the leading columns never change order; later versions only append.
LEADING_SOLVE_COLUMNS = list(_COLUMNS["solves_leading"])
SOLVE_COLUMNS_V1 = LEADING_SOLVE_COLUMNS + ["time_per_iteration_us", "seed", "problem_name", "message"]
SOLVE_COLUMNS = LEADING_SOLVE_COLUMNS + list(_COLUMNS["solves_extra"])
# Appended by a run with a scene (docs/collision.md): the exact check of the returned q, empty in
# the rows of families without a scene. Read as collision_free in {1.0, 0.0, nan (no scene)},
# min_clearance [m] (nan: no scene), collision_pair as text.
COLLISION_COLUMNS = list(_COLUMNS["collision"])

TRACE_COLUMNS_V1 = ["family", "problem", "solver", "iteration", "position_error", "orientation_error",
                    "step_norm", "damping", "elapsed_us"]
TRACE_COLUMNS = list(_COLUMNS["traces"])

SOLUTION_COLUMNS = list(_COLUMNS["solutions"])

# summary.csv (written by ikbench.analysis.figures.write_summary): the columns of format version 1's
# summary first, in their order, then the intervals and the extra time figures.
SUMMARY_COLUMNS = [
    "family", "solver", "solves", "supported", "converged", "success_rate", "iterations_median",
    "iterations_p90", "position_error_median", "orientation_error_median", "time_us_median", "time_us_p90",
    "fk_evals_mean", "jacobian_evals_mean", "time_us_mean",
    "success_ci_low", "success_ci_high", "time_us_p99", "time_us_max", "time_us_mean_ci_low",
    "time_us_mean_ci_high", "time_us_median_ci_low", "time_us_median_ci_high", "iterations_median_ci_low",
    "iterations_median_ci_high",
]

# Optional columns of solves.csv after SOLVE_COLUMNS, each at most once, found by name (a run
# without them reads as before): the outcome and answer-quality columns of a protocol's run or
# `ikbench run --quality` (docs/protocols.md, benchmarks/harness/answer_quality.h), and the
# collision columns of a run with a scene.
QUALITY_COLUMNS = list(_COLUMNS["quality"])
# Appended by a run with an external solver (docs/external-solvers.md): the time the solver
# process reported for the solve [us], empty where it reported none.
EXTERNAL_COLUMNS = list(_COLUMNS["external"])
# Appended by a run with whole-body problems (docs/wholebody.md): the error of each priority
# level, "position:orientation" per level separated by spaces, and the number of levels met
# from the top; empty in the rows of other families.
LEVEL_COLUMNS = list(_COLUMNS["levels"])
OPTIONAL_SOLVE_COLUMNS = QUALITY_COLUMNS + COLLISION_COLUMNS + EXTERNAL_COLUMNS + LEVEL_COLUMNS
OUTCOMES = tuple(SCHEMA["outcomes"])

SOLVE_COLUMNS_BY_VERSION = {1: SOLVE_COLUMNS_V1, 2: SOLVE_COLUMNS}
TRACE_COLUMNS_BY_VERSION = {1: TRACE_COLUMNS_V1, 2: TRACE_COLUMNS}

STATUSES = tuple(SCHEMA["statuses"])
# Solves the backend never attempted: they count (as failures) in the success rate, but not in
# iteration, error, evaluation or time figures.
NOT_ATTEMPTED = tuple(SCHEMA["not_attempted"])
GOAL_KINDS = tuple(SCHEMA["goal_kinds"])
JOINT_TYPES = {k: tuple(v) for k, v in SCHEMA["joint_types"].items()}

# How the cells of each column kind (results_schema.COLUMN_KINDS) are typed in a DataFrame.
_INT_KINDS = {"index", "count"}
_BOOL_KINDS = {"flag"}
_FLOAT_KINDS = {"number", "number_or_empty", "non_negative", "non_negative_or_empty", "flag_or_empty"}
_MAX_INDEX = LIMITS["max_index"]            # problem and solution indices are C++ ints
_MAX_COUNT = LIMITS["max_count"]            # other counts: exact as a double


# The files a complete run's manifest (run.json "files") lists: exactly these, by plain name, each
# under this name or gzip-compressed as NAME.gz (what `ikbench run` writes; docs/results-format.md
# "Compression").
MANIFEST_FILES = tuple(SCHEMA["manifest_files"])
GZIP_SUFFIX = SCHEMA["gzip_suffix"]
# A compressed file may expand to MAX_GZIP_RATIO times its size (a run's files expand 3 to 15
# times; gzip at most about 1032 times, a stream of zeros), and to GZIP_FLOOR_BYTES whatever its
# ratio: a gzip bomb is refused once it passes that, never read whole.
MAX_GZIP_RATIO = LIMITS["max_gzip_ratio"]
GZIP_FLOOR_BYTES = LIMITS["gzip_floor_bytes"]
MAX_RUN_JSON_BYTES = LIMITS["max_run_json_bytes"]        # run.json
MAX_MODELS_JSON_BYTES = LIMITS["max_models_json_bytes"]  # models.json (the loaders' 1 GiB input limit)
# Longest line (and so CSV field) of a CSV or JSON Lines file: the q of the largest model the
# loaders accept (100 000 joints, at most 7 configuration numbers each, a number at most 24
# characters and a space: 17.5 MB) fits with room to spare.
MAX_LINE_BYTES = LIMITS["max_line_bytes"]
MAX_JSON_NESTING = LIMITS["max_json_nesting"]            # arrays and objects in one JSON document
MAX_PROBLEM_INDEX = _MAX_INDEX

if csv.field_size_limit() < MAX_LINE_BYTES:
    csv.field_size_limit(MAX_LINE_BYTES)
