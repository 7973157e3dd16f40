# The libraries' header-only dependencies for the WebAssembly build (the playground, docs/playground.md):
# Eigen, fmt (header-only mode) and nlohmann-json from the host's Debian packages, as the targets the
# native build's find_package gives (Eigen3::Eigen, fmt::fmt, nlohmann_json::nlohmann_json), so that
# core/, kinematics/, collision/, solvers/ and scenarios/ build for WebAssembly from their own
# CMakeLists. The headers are linked into one directory so that /usr/include itself (glibc's
# headers) never reaches Emscripten's compiler.
set(_ikb_host_headers ${CMAKE_BINARY_DIR}/host_headers)
file(MAKE_DIRECTORY ${_ikb_host_headers})
foreach(_dir eigen3/Eigen fmt nlohmann)
  get_filename_component(_name ${_dir} NAME)
  if(NOT EXISTS /usr/include/${_dir})
    message(FATAL_ERROR "playground: /usr/include/${_dir} not found (Debian: libeigen3-dev libfmt-dev "
                        "nlohmann-json3-dev; scripts/setup.sh installs them)")
  endif()
  file(CREATE_LINK /usr/include/${_dir} ${_ikb_host_headers}/${_name} SYMBOLIC)
endforeach()
add_library(ikbench_wasm_host_headers INTERFACE)
target_include_directories(ikbench_wasm_host_headers SYSTEM INTERFACE ${_ikb_host_headers})
add_library(Eigen3::Eigen ALIAS ikbench_wasm_host_headers)
add_library(nlohmann_json::nlohmann_json ALIAS ikbench_wasm_host_headers)
add_library(ikbench_wasm_fmt INTERFACE)
target_link_libraries(ikbench_wasm_fmt INTERFACE ikbench_wasm_host_headers)
target_compile_definitions(ikbench_wasm_fmt INTERFACE FMT_HEADER_ONLY)
add_library(fmt::fmt ALIAS ikbench_wasm_fmt)
