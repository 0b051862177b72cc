# cmake -DLAYER=name -DALLOWED=a,b,... -DFILES=f1,f2,... -P check_layer_includes.cmake
cmake_minimum_required(VERSION 3.25)
# Fails, naming the file, the include and the missing dependency, when a file of engine layer
# LAYER includes a header of another layer ("moreau/<other>/..." or a private "../<other>/...")
# that is not among ALLOWED, the layer's declared transitive dependencies.
string(REPLACE "," ";" allowed "${ALLOWED}")
string(REPLACE "," ";" files "${FILES}")
set(problems "")
foreach(file ${files})
  file(STRINGS ${file} includes REGEX "^[ \t]*#[ \t]*include[ \t]+\"(moreau|\\.\\.)/")
  foreach(line ${includes})
    if(NOT line MATCHES "\"(moreau|\\.\\.)/([A-Za-z0-9_]+)/")
      continue()
    endif()
    set(other ${CMAKE_MATCH_2})
    if(other STREQUAL LAYER OR other IN_LIST allowed)
      continue()
    endif()
    string(STRIP "${line}" line)
    string(APPEND problems "  ${file}: ${line}: layer '${LAYER}' does not depend on layer "
                           "'${other}' (declared dependencies: ${ALLOWED})\n")
  endforeach()
endforeach()
if(problems)
  message(FATAL_ERROR "engine layer '${LAYER}' includes headers of layers it does not depend on "
                      "(declare the dependency in engine/CMakeLists.txt if it creates no cycle, "
                      "else move the code):\n${problems}")
endif()
