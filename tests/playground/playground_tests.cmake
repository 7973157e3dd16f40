# The playground's tests under ctest (docs/playground.md). Included from tests/CMakeLists.txt.
#
# playground_wasm_native: tests/playground/wasm_native_test.py runs the same Session natively
#   (playground_session) and as WebAssembly in node (session_cli.js) on 100 seeded problems per
#   model and backend and compares the answers; prints the native and WebAssembly solve times.
# playground_browser: tests/playground/browser_test.py drags the target of `ikbench playground`'s
#   page in headless Chromium and checks the answers by native forward kinematics; prints the page's
#   solve time against the native one and the frames per second. Exit 77 = skipped (no module, no
#   Chromium), with the reason printed. Screenshot: <build>/tests/playground/browser/playground.png.
if(TARGET playground_session AND TARGET ikbench)
  add_test(NAME playground_wasm_native
    COMMAND ${IKBENCH_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/wasm_native_test.py
            --native $<TARGET_FILE:playground_session> --module "${IKBENCH_PLAYGROUND_MODULE}"
            --ikbench $<TARGET_FILE:ikbench> --work ${CMAKE_CURRENT_BINARY_DIR}/playground/wasm_native)
  ikbench_test_timeout(_timeout 300)
  set_tests_properties(playground_wasm_native PROPERTIES LABELS "integration;slow;needs_release" TIMEOUT ${_timeout}
                       SKIP_RETURN_CODE 77)
  add_test(NAME playground_browser
    COMMAND ${IKBENCH_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/browser_test.py ${CMAKE_CURRENT_BINARY_DIR}/playground/browser
            --native $<TARGET_FILE:playground_session>)
  ikbench_test_timeout(_timeout 300)
  set_tests_properties(playground_browser PROPERTIES LABELS "browser;slow;needs_release" TIMEOUT ${_timeout}
                       SKIP_RETURN_CODE 77 RUN_SERIAL TRUE
                       ENVIRONMENT "IKBENCH_CLI=$<TARGET_FILE:ikbench>;PYTHONDONTWRITEBYTECODE=1")
endif()
