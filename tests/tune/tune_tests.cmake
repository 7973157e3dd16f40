# `ikbench tune` (python/ikbench/analysis/tune.py) and scripts/arm_table.py under ctest. Included from
# tests/CMakeLists.txt.
#
# tune: `/usr/bin/python3 -m pytest -q tests/tune` with PYTHONPATH=<src>/python and IKBENCH_CLI set
# to the built harness (the tests that run it skip, saying so, without it). The tests check
# behaviour on tiny synthetic suites: which point the criterion picks and what the evaluation
# ran; nothing is timed. The corpus tests use $IKBENCH_CORPUS_DIR (default ../shared/data beside
# the source tree) and skip with a message when it is absent.
set(IKBENCH_PYTHON /usr/bin/python3 CACHE FILEPATH "Python 3 that runs scripts/ and their tests")
set(_tune_env "PYTHONPATH=${PROJECT_SOURCE_DIR}/python" "PYTHONDONTWRITEBYTECODE=1" "MPLBACKEND=Agg")
if(TARGET ikbench)
  list(APPEND _tune_env "IKBENCH_CLI=$<TARGET_FILE:ikbench>")
endif()
add_test(NAME tune COMMAND ${IKBENCH_PYTHON} -m pytest -q -p no:cacheprovider ${CMAKE_CURRENT_LIST_DIR})
ikbench_test_timeout(_timeout 300)
set_tests_properties(tune PROPERTIES LABELS "integration;needs_release" TIMEOUT ${_timeout} ENVIRONMENT "${_tune_env}")
