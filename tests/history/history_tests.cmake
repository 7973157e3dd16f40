# The history store (python/ikbench/io/store.py and the history modules of each layer, docs/history.md) under ctest. Included from
# tests/CMakeLists.txt.
#
# history: pytest of tests/history against an SQLite store in a temporary directory: the store and
#   its command line, change-point detection on seeded synthetic series, the published site's data.
# history_postgresql: the same tests against a throwaway PostgreSQL cluster that
#   tests/history/pg_cluster.py starts on a Unix socket in a temporary directory (as `nobody` when
#   run as root) and stops by its PID; exit 77 = skipped, with the reason printed, where the server
#   binaries or psycopg2 are absent.
# history_browser: the published site in headless Chromium (tests/history/browser_test.py);
#   exit 77 = skipped where Chromium cannot run.
set(IKBENCH_PYTHON /usr/bin/python3 CACHE FILEPATH "Python 3 that runs scripts/ and their tests")
set(_history_env "PYTHONPATH=${PROJECT_SOURCE_DIR}/python" "PYTHONDONTWRITEBYTECODE=1" "MPLBACKEND=Agg")
if(TARGET ikbench)
  list(APPEND _history_env "IKBENCH_CLI=$<TARGET_FILE:ikbench>")
endif()
add_test(NAME history COMMAND ${IKBENCH_PYTHON} -m pytest -q -p no:cacheprovider ${CMAKE_CURRENT_LIST_DIR})
# Hang guards, several times what the tests take on a loaded 2-core machine.
ikbench_test_timeout(_timeout 900)
set_tests_properties(history PROPERTIES LABELS "integration;slow;needs_release" TIMEOUT ${_timeout}
  ENVIRONMENT "${_history_env}")
add_test(NAME history_postgresql COMMAND ${IKBENCH_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/pg_cluster.py
         ${CMAKE_CURRENT_LIST_DIR})
ikbench_test_timeout(_timeout 900)
set_tests_properties(history_postgresql PROPERTIES LABELS "integration;slow;needs_release" TIMEOUT ${_timeout}
  SKIP_RETURN_CODE 77 ENVIRONMENT "${_history_env}")
add_test(NAME history_browser COMMAND ${IKBENCH_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/browser_test.py
         ${CMAKE_CURRENT_BINARY_DIR}/history/browser)
ikbench_test_timeout(_timeout 300)
set_tests_properties(history_browser PROPERTIES LABELS "browser;needs_release" TIMEOUT ${_timeout} SKIP_RETURN_CODE 77
  RUN_SERIAL TRUE ENVIRONMENT "${_history_env}")
# The tables of measured figures in README.md and docs/*.md are those results/history/history.json.gz gives.
add_test(NAME history_docs_current COMMAND ${IKBENCH_PYTHON} -m ikbench.render.doctables
         ${PROJECT_SOURCE_DIR}/results/history/history.json.gz --check --repo ${PROJECT_SOURCE_DIR})
ikbench_test_timeout(_timeout 300)
set_tests_properties(history_docs_current PROPERTIES LABELS "integration;slow;needs_release" TIMEOUT ${_timeout}
  ENVIRONMENT "${_history_env}")
