# The regression gate (scripts/regress.py) under ctest. Included at the end of
# tests/CMakeLists.txt.
#
# regress_gate: the gate's unit tests on synthetic results (Python standard
# library only; nothing is timed).
# regress_gate_same_build: when the harness is built, one build run on the
# quick suite at 1 and at 2 threads must pass the gate against itself
# (deterministic figures only: unit tests do not time things).
set(IKBENCH_PYTHON /usr/bin/python3 CACHE FILEPATH "Python 3 that runs scripts/ and their tests")
add_test(NAME regress_gate COMMAND ${IKBENCH_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/regress_test.py)
ikbench_test_timeout(_timeout 120)
set_tests_properties(regress_gate PROPERTIES LABELS "integration;needs_release" TIMEOUT ${_timeout})

if(TARGET ikbench)
  add_test(NAME regress_gate_same_build
    COMMAND ${CMAKE_COMMAND}
      -DIKBENCH=$<TARGET_FILE:ikbench>
      -DPYTHON=${IKBENCH_PYTHON}
      -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
      -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/regress_same_build
      -P ${CMAKE_CURRENT_SOURCE_DIR}/regress_same_build.cmake)
  ikbench_test_timeout(_timeout 300)
  set_tests_properties(regress_gate_same_build PROPERTIES LABELS "integration;needs_release" TIMEOUT ${_timeout})
endif()
