# Fails when a generated document differs from what its generator prints now.
execute_process(COMMAND ${GENERATOR} ${IKBENCH} OUTPUT_VARIABLE now RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${GENERATOR} failed (${rc})")
endif()
file(READ ${DOC} committed)
if(NOT now STREQUAL committed)
  message(FATAL_ERROR "${DOC} is not current: regenerate it with\n  ${GENERATOR} ${IKBENCH} > ${DOC}")
endif()
