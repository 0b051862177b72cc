# The test that a run resumed from its checkpoints repeats the uninterrupted run (the harness's
# resumable runs, moreau/harness/resumable_run.hpp): the experiment run straight; then run again
# with --resume, killed by --interrupt-after after each of INTERRUPTS steps, and resumed to the
# end; the FILES of the two runs must be the same, byte for byte, but for the last column of
# the files in TIMED (a wall-clock column), or, with COLUMNS, but for every column of theirs not
# in COLUMNS (comma-separated files whose wall-clock columns lie in between). A run that ends has
# status 0 or 1 (1: a check failed, which is the experiment test's matter, not this one's); 2 is
# an error; a stopped run has status 4 (moreau/harness/experiment.hpp).
# Arguments: -DEXE=experiment -DOUT=dir -DARGS=args -DINTERRUPTS=steps -DFILES=names
#            [-DTIMED=names] [-DCOLUMNS=indices from 0] [-DSTRAIGHT_ARGS=args]
#            [-DRESUMED_ARGS=args] (added to the uninterrupted run's and to the resumed runs'
#            arguments, e.g. a folder of their own); lists separated by "|" (a ";" would split
#            the ctest command).
cmake_minimum_required(VERSION 3.25)  # if(IN_LIST) in script mode
foreach(optional TIMED COLUMNS STRAIGHT_ARGS RESUMED_ARGS)
  if(NOT DEFINED ${optional})
    set(${optional} "")
  endif()
endforeach()
foreach(list ARGS INTERRUPTS FILES TIMED COLUMNS STRAIGHT_ARGS RESUMED_ARGS)
  string(REPLACE "|" ";" ${list} "${${list}}")
endforeach()
file(REMOVE_RECURSE ${OUT})
execute_process(COMMAND ${EXE} ${ARGS} ${STRAIGHT_ARGS} --output ${OUT}/straight
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT (rc EQUAL 0 OR rc EQUAL 1))
  message(FATAL_ERROR "the uninterrupted run failed (${rc}): ${err}")
endif()
foreach(interrupt_after IN LISTS INTERRUPTS)
  execute_process(COMMAND ${EXE} ${ARGS} ${RESUMED_ARGS} --resume --interrupt-after
                          ${interrupt_after} --output ${OUT}/resumed
                  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
  if(NOT rc EQUAL 4 OR NOT err MATCHES "stopped: .*interrupted")
    message(FATAL_ERROR "the run stopped after ${interrupt_after} steps was not interrupted (${rc}): ${err}")
  endif()
endforeach()
execute_process(COMMAND ${EXE} ${ARGS} ${RESUMED_ARGS} --resume --output ${OUT}/resumed
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT (rc EQUAL 0 OR rc EQUAL 1))
  message(FATAL_ERROR "the resumed run failed (${rc}): ${err}")
endif()
foreach(name IN LISTS FILES)
  foreach(run straight resumed)
    if(NOT EXISTS ${OUT}/${run}/${name})
      message(FATAL_ERROR "${OUT}/${run}/${name}: not written")
    endif()
    file(STRINGS ${OUT}/${run}/${name} lines)
    if(name IN_LIST TIMED AND COLUMNS)
      set(kept "")
      foreach(line IN LISTS lines)
        string(REPLACE "," ";" fields "${line}")
        list(GET fields ${COLUMNS} chosen)
        string(JOIN "," chosen ${chosen})
        list(APPEND kept "${chosen}")
      endforeach()
      set(lines "${kept}")
    elseif(name IN_LIST TIMED)
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
