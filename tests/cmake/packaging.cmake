# The vcpkg overlay port (ports/smdebug) and the conan recipe (conanfile.py), checked as far as a
# machine without vcpkg and conan allows: scripts/check-packaging.py runs the CMake configure /
# build / install steps they drive, with their options, and configures a find_package consumer
# against the result (packaging.vcpkg, packaging.conan). Header-only: nothing is compiled.
find_package(Python3 COMPONENTS Interpreter QUIET)
foreach(_recipe vcpkg conan)
  if(Python3_Interpreter_FOUND)
    add_test(NAME packaging.${_recipe}
             COMMAND Python3::Interpreter ${PROJECT_SOURCE_DIR}/scripts/check-packaging.py ${_recipe}
                     ${CMAKE_BINARY_DIR}/packaging-${_recipe})
  else()
    smdebug_missing_test(packaging.${_recipe} "python3 is needed to check the packaging (scripts/setup-deps.sh installs it)")
  endif()
  set_tests_properties(packaging.${_recipe} PROPERTIES LABELS packaging TIMEOUT 300)
endforeach()
unset(_recipe)
