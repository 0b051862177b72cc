# `cmake --install BUILD --prefix PREFIX`: the engine library and its public headers, the
# `moreau` program and a CMake package, so that another project builds against the engine with
#   find_package(Moreau REQUIRED)
#   target_link_libraries(app PRIVATE Moreau::engine)
# (validation/install/ builds such a project against an installed tree under ctest).
include(CMakePackageConfigHelpers)

# The program finds the library installed beside it.
set_target_properties(moreau PROPERTIES INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")

install(TARGETS moreau_engine EXPORT MoreauTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS moreau RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/engine/include/moreau
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.hpp")
install(EXPORT MoreauTargets NAMESPACE Moreau:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Moreau)

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/MoreauConfig.cmake.in
                              ${CMAKE_CURRENT_BINARY_DIR}/MoreauConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Moreau)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/MoreauConfigVersion.cmake
                                 COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/MoreauConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/MoreauConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Moreau)
