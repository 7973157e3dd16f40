# The report's tests under ctest. Included from tests/CMakeLists.txt.
#
# report_data: pytest of tests/report (the page data against the analysis library; curves, sweeps,
#   solution coverage), PYTHONPATH=<src>/python, IKBENCH_CLI set when the harness is built.
# report_browser: tests/report/browser_test.py writes the report of a small run of the harness and
#   checks the page in headless Chromium (selenium); exit 77 = skipped, with the reason printed,
#   where Chromium cannot run. Screenshots: <build>/tests/report/browser/report*.png.
set(_report_env "PYTHONPATH=${PROJECT_SOURCE_DIR}/python" "PYTHONDONTWRITEBYTECODE=1" "MPLBACKEND=Agg")
if(TARGET ikbench)
  list(APPEND _report_env "IKBENCH_CLI=$<TARGET_FILE:ikbench>")
endif()
add_test(NAME report_data COMMAND ${IKBENCH_PYTHON} -m pytest -q -p no:cacheprovider ${CMAKE_CURRENT_LIST_DIR})
ikbench_test_timeout(_timeout 300)
set_tests_properties(report_data PROPERTIES LABELS "integration;needs_release" TIMEOUT ${_timeout}
  ENVIRONMENT "${_report_env}")
if(TARGET ikbench)
  add_test(NAME report_browser COMMAND ${IKBENCH_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/browser_test.py
           ${CMAKE_CURRENT_BINARY_DIR}/report/browser)
  ikbench_test_timeout(_timeout 300)
  set_tests_properties(report_browser PROPERTIES LABELS "browser;slow;needs_release" TIMEOUT ${_timeout} SKIP_RETURN_CODE 77
                       RUN_SERIAL TRUE
                       ENVIRONMENT "${_report_env}")
endif()
