# Every ctest test has a tier label (tests/CMakeLists.txt lists the tiers): runs
# `ctest -N -LE <tiers>` on the build directory, which lists exactly the tests
# without one, and fails naming them.
# cmake -DCTEST=<ctest> -DBUILD_DIR=<build> -P tiers_check.cmake
execute_process(COMMAND ${CTEST} --test-dir ${BUILD_DIR} -N -LE "^(unit|integration|browser|slurm|slow)$"
                OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "ctest -N failed (${rc}):\n${out}")
endif()
if(NOT out MATCHES "Total Tests: ([0-9]+)")
  message(FATAL_ERROR "no test count in the output of ctest -N:\n${out}")
endif()
if(NOT CMAKE_MATCH_1 EQUAL 0)
  message(FATAL_ERROR "${CMAKE_MATCH_1} tests have no tier label (unit, integration, browser, slurm or slow); "
                      "give them LABELS where they are added:\n${out}")
endif()
message(STATUS "every test has a tier label")
