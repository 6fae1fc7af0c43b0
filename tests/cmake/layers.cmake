# The include graph of include/smdebug goes down the layers and has no cycle (cmake/check_layers.cmake).
add_test(NAME include_layers
  COMMAND ${CMAKE_COMMAND} -DSMDEBUG_INCLUDE_DIR=${PROJECT_SOURCE_DIR}/include/smdebug -P ${PROJECT_SOURCE_DIR}/cmake/check_layers.cmake)
