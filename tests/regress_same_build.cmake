# Run by ctest (see regress.cmake) on the real harness:
# 1. the same build, run on the quick suite at 1 thread and at 2 threads,
#    passes the regression gate against itself (directly and through a
#    baseline written by `update`);
# 2. a deliberately weakened solver (dls with max_step=0.05, relabelled as
#    `dls`) fails it with exit status 1.
# Only deterministic figures are compared (--no-time): unit tests do not time
# things. Solvers: IKBENCH_GATE_TEST_SOLVERS (default dls) keeps this cheap
# under the sanitizers; scripts/ci_gate.sh runs the suite's full list.
# Every spec gets time_budget_us=0 (no time budget): the quick suite's 50 ms
# safety budget binds under the sanitizers (about 30x slower), and a binding
# clock is the one thing that makes results depend on the thread count.
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
if(DEFINED ENV{IKBENCH_GATE_TEST_SOLVERS})
  set(solvers $ENV{IKBENCH_GATE_TEST_SOLVERS})
else()
  set(solvers dls)
endif()
string(REPLACE "," ":time_budget_us=0," solvers "${solvers}:time_budget_us=0")
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message(STATUS "${ARGN}\n${out}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "command failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
endfunction()
set(gate ${PYTHON} ${SOURCE_DIR}/scripts/regress.py)
set(ikb_run ${IKBENCH} run --suite quick --no-trace --progress none)

run(${ikb_run} --solvers ${solvers} --threads 1 --out ${WORK_DIR}/t1)
run(${ikb_run} --solvers ${solvers} --threads 2 --out ${WORK_DIR}/t2)
run(${gate} compare ${WORK_DIR}/t1 ${WORK_DIR}/t2 --no-time)
run(${gate} update ${WORK_DIR}/t1 --baseline ${WORK_DIR}/baseline)
run(${gate} compare ${WORK_DIR}/baseline ${WORK_DIR}/t2 --no-time)

run(${ikb_run} --solvers dls:max_step=0.05:time_budget_us=0 --threads 2 --out ${WORK_DIR}/weak)
# solves.csv.gz is gzip-compressed: relabelled through Python's gzip module (no ';' in the
# code: run() passes its arguments on as a list).
run(${PYTHON} -c "import gzip, sys
path = sys.argv[1]
text = gzip.open(path, 'rt').read().replace(',dls:max_step=0.05:time_budget_us=0,', ',dls:time_budget_us=0,')
with gzip.open(path, 'wt') as f:
    f.write(text)
" ${WORK_DIR}/weak/solves.csv.gz)
# run.json names the same spec (the readers refuse a row whose solver it does not list).
file(READ ${WORK_DIR}/weak/run.json meta)
string(REPLACE "\"dls:max_step=0.05:time_budget_us=0\"" "\"dls:time_budget_us=0\"" meta "${meta}")
file(WRITE ${WORK_DIR}/weak/run.json "${meta}")
# The relabelled files no longer match the run's manifest: read them anyway.
execute_process(COMMAND ${gate} compare ${WORK_DIR}/baseline ${WORK_DIR}/weak --no-time --allow-missing --allow-incomplete
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message(STATUS "weakened dls:\n${out}")
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "the gate did not fail on a weakened dls (exit ${rc}, expected 1)\n${out}\n${err}")
endif()
string(REGEX MATCH "chain7-pose +dls:time_budget_us=0 +[0-9]+ [^\n]*REGRESSION" hit "${out}")
if(NOT hit)
  message(FATAL_ERROR "the weakened dls is not marked on chain7-pose:\n${out}")
endif()
