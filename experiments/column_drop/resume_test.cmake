# Resuming the column drop from its checkpoints repeats an uninterrupted run (README.md,
# "Resuming from checkpoints"): the disk column of 16 particles run straight, and
# run again in three processes: killed (--interrupt-after) in its settling,
# then in its first release, then resumed to the end. series.csv (all but the wall-clock column),
# snapshots.csv and profiles.csv must be the same, byte for byte.
# Arguments: -DEXE=column_drop -DREFERENCE=dir -DOUT=dir
file(REMOVE_RECURSE ${OUT})
set(common --scale quick --family disk --reference ${REFERENCE})
execute_process(COMMAND ${EXE} ${common} --output ${OUT}/straight OUTPUT_QUIET ERROR_QUIET)
foreach(interrupt_after 40 200)
  execute_process(COMMAND ${EXE} ${common} --resume --interrupt-after ${interrupt_after}
                          --output ${OUT}/resumed
                  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
  if(rc EQUAL 0 OR NOT err MATCHES "interrupted")
    message(FATAL_ERROR "the run stopped after ${interrupt_after} steps was not interrupted (${rc}): ${err}")
  endif()
endforeach()
execute_process(COMMAND ${EXE} ${common} --resume --output ${OUT}/resumed OUTPUT_QUIET
                ERROR_QUIET)
foreach(name series.csv snapshots.csv profiles.csv)
  foreach(run straight resumed)
    if(NOT EXISTS ${OUT}/${run}/${name})
      message(FATAL_ERROR "${OUT}/${run}/${name}: not written")
    endif()
    file(STRINGS ${OUT}/${run}/${name} lines)
    if(name STREQUAL "series.csv")  # drop the wall-clock column, the last
      list(TRANSFORM lines REPLACE ",[^,]*$" "")
    endif()
    set(${run} "${lines}")
  endforeach()
  if(NOT straight STREQUAL resumed)
    message(FATAL_ERROR "${name}: the resumed run differs from the uninterrupted one")
  endif()
  list(LENGTH straight count)
  message(STATUS "${name}: ${count} lines, the same")
endforeach()
