# The analysis library's tests (python/ikbench) under ctest. Included from tests/CMakeLists.txt.
#
# python_analysis: `/usr/bin/python3 -m pytest -q tests/python` with PYTHONPATH=<src>/python, and
# IKBENCH_CLI set to the built harness when there is one (tests/python/test_binary.py runs it on a
# tiny run; without it those tests are skipped and say so). Nothing in these tests is timed.
set(IKBENCH_PYTHON /usr/bin/python3 CACHE FILEPATH "Python 3 that runs scripts/ and their tests")
set(_env "PYTHONPATH=${PROJECT_SOURCE_DIR}/python" "PYTHONDONTWRITEBYTECODE=1" "MPLBACKEND=Agg")
if(TARGET ikbench)
  list(APPEND _env "IKBENCH_CLI=$<TARGET_FILE:ikbench>")
endif()
add_test(NAME python_analysis
  COMMAND ${IKBENCH_PYTHON} -m pytest -q -p no:cacheprovider ${CMAKE_CURRENT_LIST_DIR})
ikbench_test_timeout(_timeout 300)
set_tests_properties(python_analysis PROPERTIES LABELS "integration;slow;needs_release" TIMEOUT ${_timeout}
  ENVIRONMENT "${_env}")
