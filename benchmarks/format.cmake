# The results format as one library below the harness, the bindings and the playground
# (docs/results-format.md): the column lists, codecs and JSON of models and problems
# (harness/results_format.*), their facts generated from python/ikbench/data/results_format.json
# (cmake/results_schema.cmake), the gzip streams of a run's files and the solver catalog.
# Included by benchmarks/CMakeLists.txt and, for the WebAssembly build, by playground/ (without
# the gzip streams: zlib has no build there, and the page reads no run).
include(${PROJECT_SOURCE_DIR}/cmake/results_schema.cmake)
ikbench_results_schema(${CMAKE_BINARY_DIR}/generated)
set(_ikb_format_sources ${PROJECT_SOURCE_DIR}/benchmarks/harness/results_format.cpp
                        ${PROJECT_SOURCE_DIR}/benchmarks/harness/solver_catalog.cpp)
if(NOT EMSCRIPTEN)
  find_package(ZLIB REQUIRED)
  list(APPEND _ikb_format_sources ${PROJECT_SOURCE_DIR}/benchmarks/harness/gzip_stream.cpp)
endif()
add_library(ikbench_format STATIC ${_ikb_format_sources})
target_include_directories(ikbench_format PUBLIC ${PROJECT_SOURCE_DIR}/benchmarks ${CMAKE_BINARY_DIR}/generated)
target_link_libraries(ikbench_format PUBLIC ikbench_solvers ikbench_collision ikbench_kinematics ikbench_core
  nlohmann_json::nlohmann_json fmt::fmt)
if(NOT EMSCRIPTEN)
  target_link_libraries(ikbench_format PRIVATE ZLIB::ZLIB)
endif()
