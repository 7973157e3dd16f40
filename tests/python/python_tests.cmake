# The analysis library's tests (python/ikbench) under ctest. Included from tests/CMakeLists.txt.
#
# One ctest test per tests/python/test_*.py, named python_analysis.<file stem>, so that ctest runs
# them side by side and a slow file is reported by name: each runs
# `/usr/bin/python3 -m pytest -q tests/python/<file>` with PYTHONPATH=<src>/python, and
# IKBENCH_CLI set to the built harness when there is one (the tests that run it on a tiny run are
# skipped without it and say so). Nothing in these tests is timed.
set(IKBENCH_PYTHON /usr/bin/python3 CACHE FILEPATH "Python 3 that runs scripts/ and their tests")
set(_env "PYTHONPATH=${PROJECT_SOURCE_DIR}/python" "PYTHONDONTWRITEBYTECODE=1" "MPLBACKEND=Agg")
if(TARGET ikbench)
  list(APPEND _env "IKBENCH_CLI=$<TARGET_FILE:ikbench>")
endif()
ikbench_test_timeout(_timeout 300)
file(GLOB _python_test_files CONFIGURE_DEPENDS "${CMAKE_CURRENT_LIST_DIR}/test_*.py")
foreach(_file IN LISTS _python_test_files)
  get_filename_component(_stem "${_file}" NAME_WE)
  string(REGEX REPLACE "^test_" "" _stem "${_stem}")
  add_test(NAME python_analysis.${_stem}
    COMMAND ${IKBENCH_PYTHON} -m pytest -q -p no:cacheprovider ${_file})
  set_tests_properties(python_analysis.${_stem} PROPERTIES LABELS "integration;slow;needs_release"
    TIMEOUT ${_timeout} ENVIRONMENT "${_env}")
endforeach()
