# Pieces run at once compute what they compute one after the other (README.md "Quick and full
# scale"): the quick run with --pieces 2 must write the curves.csv of the run with --pieces 1,
# byte for byte but for the wall-clock columns (solve_seconds, step_seconds).
# Arguments: -DEXE=biaxial_compression -DREFERENCE=dir -DOUT=dir
file(REMOVE_RECURSE ${OUT})
foreach(pieces 1 2)
  execute_process(COMMAND ${EXE} --scale quick --pieces ${pieces} --reference ${REFERENCE}
                          --output ${OUT}/pieces${pieces}
                  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the run with --pieces ${pieces} failed (${rc}): ${err}")
  endif()
  file(STRINGS ${OUT}/pieces${pieces}/curves.csv lines)
  set(kept "")
  foreach(line IN LISTS lines)
    string(REPLACE "," ";" fields "${line}")
    list(REMOVE_AT fields 10 11)
    list(JOIN fields "," line)
    list(APPEND kept "${line}")
  endforeach()
  set(curves${pieces} "${kept}")
endforeach()
list(GET curves1 0 header)
if(NOT header MATCHES "^family,k_n,step,axial_strain,volumetric_strain,sigma1,sigma3,deviatoric,newton_steps,substeps,contacts,")
  message(FATAL_ERROR "curves.csv: unexpected columns (${header}); update the columns dropped here")
endif()
if(NOT curves1 STREQUAL curves2)
  message(FATAL_ERROR "curves.csv: the run with --pieces 2 differs from the run with --pieces 1")
endif()
list(LENGTH curves1 count)
message(STATUS "curves.csv: ${count} lines, the same with --pieces 1 and 2")
