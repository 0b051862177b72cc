# moreau_engine_layer(NAME [DEPENDS layer...]): the engine layer NAME, the sources
# src/NAME/*.cpp with the public headers include/moreau/NAME/ (an object library moreau_NAME,
# position independent for the shared moreau_engine; an INTERFACE library for a layer of
# headers only), compiled against the layers it depends on.
# Every layer in DEPENDS must have been declared before (so that no cycle can be declared);
# the include check target moreau_NAME_includes fails the build when a file of the layer
# includes a header of a layer outside its transitive dependencies.
set(MOREAU_LAYER_CHECK_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/check_layer_includes.cmake)

function(moreau_engine_layer name)
  cmake_parse_arguments(LAYER "" "" "DEPENDS" ${ARGN})
  set(root ${PROJECT_SOURCE_DIR}/engine)
  get_property(declared GLOBAL PROPERTY MOREAU_ENGINE_LAYERS)
  if(name IN_LIST declared)
    message(FATAL_ERROR "engine layer '${name}' is declared twice")
  endif()
  set(allowed ${name})
  foreach(dependency ${LAYER_DEPENDS})
    if(NOT dependency IN_LIST declared)
      message(FATAL_ERROR "engine layer '${name}' depends on '${dependency}', which is not "
                          "declared before it in engine/CMakeLists.txt (layers form no cycle: "
                          "a layer may only depend on layers below it)")
    endif()
    get_property(below GLOBAL PROPERTY MOREAU_LAYER_CLOSURE_${dependency})
    list(APPEND allowed ${dependency} ${below})
  endforeach()
  list(REMOVE_DUPLICATES allowed)
  list(REMOVE_ITEM allowed ${name})
  set_property(GLOBAL PROPERTY MOREAU_LAYER_CLOSURE_${name} ${allowed})
  set_property(GLOBAL APPEND PROPERTY MOREAU_ENGINE_LAYERS ${name})

  file(GLOB sources CONFIGURE_DEPENDS ${root}/src/${name}/*.cpp)
  file(GLOB_RECURSE files CONFIGURE_DEPENDS ${root}/src/${name}/*.cpp ${root}/src/${name}/*.hpp
       ${root}/include/moreau/${name}/*.hpp)
  set(target moreau_${name})
  if(sources)
    add_library(${target} OBJECT ${sources})
    set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON)
    # Calls between the engine's own functions stay direct, as in a static library (no
    # interposition through the PLT), so the shared library computes what the objects did.
    target_compile_options(${target} PRIVATE -fno-semantic-interposition)
    target_include_directories(${target} PUBLIC ${root}/include)
    target_link_libraries(${target} PUBLIC Eigen3::Eigen OpenMP::OpenMP_CXX
                                           nlohmann_json::nlohmann_json
                                    PRIVATE moreau_warnings)
    foreach(dependency ${LAYER_DEPENDS})
      target_link_libraries(${target} PUBLIC moreau_${dependency})
    endforeach()
    if(MOREAU_SANITIZE)
      target_link_libraries(${target} PUBLIC moreau_warnings)
    endif()
  else()
    add_library(${target} INTERFACE)
    target_include_directories(${target} INTERFACE ${root}/include)
    target_link_libraries(${target} INTERFACE Eigen3::Eigen OpenMP::OpenMP_CXX
                                              nlohmann_json::nlohmann_json)
    foreach(dependency ${LAYER_DEPENDS})
      target_link_libraries(${target} INTERFACE moreau_${dependency})
    endforeach()
  endif()

  # The include check: at configure time, so that a violation is reported at once, and at
  # build time whenever one of the layer's files changes.
  string(REPLACE ";" "," allowed_text "${allowed}")
  string(REPLACE ";" "," files_text "${files}")
  execute_process(COMMAND ${CMAKE_COMMAND} -DLAYER=${name} "-DALLOWED=${allowed_text}"
                          "-DFILES=${files_text}" -P ${MOREAU_LAYER_CHECK_SCRIPT}
                  RESULT_VARIABLE status ERROR_VARIABLE errors)
  if(NOT status EQUAL 0)
    string(REGEX REPLACE "CMake Error at [^\n]*\n" "" errors "${errors}")
    message(FATAL_ERROR "${errors}")
  endif()
  set(stamp ${CMAKE_CURRENT_BINARY_DIR}/layer_includes/${name}.stamp)
  add_custom_command(OUTPUT ${stamp}
                     COMMAND ${CMAKE_COMMAND} -DLAYER=${name} "-DALLOWED=${allowed_text}"
                             "-DFILES=${files_text}" -P ${MOREAU_LAYER_CHECK_SCRIPT}
                     COMMAND ${CMAKE_COMMAND} -E touch ${stamp}
                     DEPENDS ${files} ${MOREAU_LAYER_CHECK_SCRIPT}
                     COMMENT "Checking the includes of engine layer ${name}" VERBATIM)
  add_custom_target(${target}_includes ALL DEPENDS ${stamp})
  add_dependencies(${target} ${target}_includes)
endfunction()
