# The include graph of include/smdebug goes down the layers and has no cycle (cmake/check_layers.cmake).
add_test(NAME include_layers
  COMMAND ${CMAKE_COMMAND} -DSMDEBUG_INCLUDE_DIR=${PROJECT_SOURCE_DIR}/include/smdebug -P ${PROJECT_SOURCE_DIR}/cmake/check_layers.cmake)

# local.hpp and rules/rules.hpp never bring the network transport (Asio, OpenSSL): CONTRIBUTING.md.
foreach(_header local rules/rules)
  string(REPLACE "/" "_" _name ${_header})
  add_test(NAME headers.no_transport.${_name}
    COMMAND ${CMAKE_COMMAND} -DCXX=${CMAKE_CXX_COMPILER} -DINCLUDE_DIR=${PROJECT_SOURCE_DIR}/include
            -DHEADER=smdebug/${_header}.hpp -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/no_transport_${_name}
            -P ${CMAKE_CURRENT_SOURCE_DIR}/cmake/no_transport.cmake.script)
endforeach()

# Every header compiles alone (tests/cmake/headers_self_contained.sh: -fsyntax-only, the project's
# warnings as errors, all cores): none leans on what its includer happened to include first. The
# torch/ headers need LibTorch and are left out. About 5 CPU-minutes with g++ 12 (under 3 minutes on
# 2 idle cores; a machine shared with other builds needs far longer, hence the timeout).
cmake_host_system_information(RESULT _smdebug_cores QUERY NUMBER_OF_LOGICAL_CORES)
add_test(NAME headers.self_contained
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cmake/headers_self_contained.sh ${CMAKE_CXX_COMPILER}
          ${PROJECT_SOURCE_DIR}/include ${_smdebug_cores} "^smdebug/torch/")
set_tests_properties(headers.self_contained PROPERTIES TIMEOUT 3600 LABELS headers)
