# The vcpkg overlay port (ports/smdebug) and the conan recipe (conanfile.py), checked as far as a
# machine without vcpkg and conan allows: scripts/check-packaging.py runs the CMake configure /
# build / install steps they drive, with their options, in both variants (header-only, the
# default; and compiled: the vcpkg feature / conan option `compiled`), checks the installed trees,
# configures a find_package consumer against each, and builds and runs tests/install_consumer's
# consumer_compiled against the compiled install (packaging.vcpkg, packaging.conan).
# Each test compiles <smdebug/src.hpp> and <smdebug/rules/src.hpp> once (at -O0, through ccache when installed):
# COST makes ctest start them early; TIMEOUT: measured 10 min cold (no ccache hit) on a 2-core
# machine at load 8; 10-20 s when ccache has the objects.
find_package(Python3 COMPONENTS Interpreter QUIET)
foreach(_recipe vcpkg conan)
  if(Python3_Interpreter_FOUND)
    add_test(NAME packaging.${_recipe}
             COMMAND Python3::Interpreter ${PROJECT_SOURCE_DIR}/scripts/check-packaging.py ${_recipe}
                     ${CMAKE_BINARY_DIR}/packaging-${_recipe})
  else()
    smdebug_missing_test(packaging.${_recipe} "python3 is needed to check the packaging (scripts/setup-deps.sh installs it)")
  endif()
  set_tests_properties(packaging.${_recipe} PROPERTIES LABELS packaging TIMEOUT 1200 COST 1000)
endforeach()
unset(_recipe)
