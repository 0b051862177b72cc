# Resuming the channel flow from its checkpoints repeats an uninterrupted run (README.md,
# "Resuming from checkpoints"): the quick channel for 0.052 s (samples at 10 ms, the steady part
# from 45 ms) run straight, and run again in three processes, killed (--interrupt-after) after
# steps 2,500 and 5,100 (the second with the steady sample of 50 ms in its checkpoint) and resumed to the
# end. samples.csv, profile.csv and rdf.csv must be the same, byte for byte.
# Arguments: -DEXE=channel_flow -DREFERENCE=dir -DOUT=dir
file(REMOVE_RECURSE ${OUT})
set(common --scale quick --duration 0.052 --threads 2 --reference ${REFERENCE})
execute_process(COMMAND ${EXE} ${common} --output ${OUT}/straight RESULT_VARIABLE rc
                OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the uninterrupted run failed (${rc}): ${err}")
endif()
foreach(interrupt_after 2500 5100)
  execute_process(COMMAND ${EXE} ${common} --resume --interrupt-after ${interrupt_after}
                          --output ${OUT}/resumed
                  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
  if(rc EQUAL 0 OR NOT err MATCHES "interrupted after step ${interrupt_after}")
    message(FATAL_ERROR "the run stopped after ${interrupt_after} steps was not interrupted (${rc}): ${err}")
  endif()
endforeach()
execute_process(COMMAND ${EXE} ${common} --resume --output ${OUT}/resumed RESULT_VARIABLE rc
                OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the resumed run failed (${rc}): ${err}")
endif()
foreach(name samples.csv profile.csv rdf.csv)
  foreach(run straight resumed)
    if(NOT EXISTS ${OUT}/${run}/${name})
      message(FATAL_ERROR "${OUT}/${run}/${name}: not written")
    endif()
    file(STRINGS ${OUT}/${run}/${name} ${run})
  endforeach()
  if(NOT straight STREQUAL resumed)
    message(FATAL_ERROR "${name}: the resumed run differs from the uninterrupted one")
  endif()
  list(LENGTH straight count)
  message(STATUS "${name}: ${count} lines, the same")
endforeach()
