# FCLIB support (engine/src/fclib) reads and writes HDF5 through its C library. The HDF5
# headers stay out of the public moreau/fclib headers, so the dependency is private; CMake
# still passes the libraries on to whatever links the static moreau_fclib.
# FindHDF5 test-compiles a C file to identify the library, so the C language must be on.
enable_language(C)
find_package(HDF5 REQUIRED COMPONENTS C)
target_include_directories(moreau_fclib PRIVATE ${HDF5_C_INCLUDE_DIRS})
target_link_libraries(moreau_fclib PRIVATE ${HDF5_C_LIBRARIES})
target_compile_definitions(moreau_fclib PRIVATE ${HDF5_C_DEFINITIONS})
