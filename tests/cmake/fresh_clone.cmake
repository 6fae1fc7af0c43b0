# configure.fresh_clone: a copy of the repository's tracked files (no node_modules, no build
# folders), configured with plain CMake as a user, the vcpkg port and the conan recipe do — no
# option, no npm — must configure (SMDEBUG_SERVE_CHARTS=AUTO: a page without charts and a
# warning) and build (unoptimised) and run the CLI.
find_program(SMDEBUG_GIT_EXECUTABLE git)
if(SMDEBUG_GIT_EXECUTABLE)
  add_test(NAME configure.fresh_clone
           COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR} -DWORK_DIR=${CMAKE_BINARY_DIR}/fresh-clone
                   -DGIT=${SMDEBUG_GIT_EXECUTABLE} -DLAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER}
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/cmake/fresh_clone.cmake.script)
else()
  smdebug_missing_test(configure.fresh_clone "git is needed to copy the repository's tracked files")
endif()
set_tests_properties(configure.fresh_clone PROPERTIES LABELS install TIMEOUT 1800 COST 1500)
