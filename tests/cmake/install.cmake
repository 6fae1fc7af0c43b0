# install + find_package(smdebug CONFIG) from a separate project (tests/install_consumer), then run
# it on a vendored conformance trial and check what it prints. The trial missing is a failure.
set(_consumer_dir ${CMAKE_BINARY_DIR}/install_consumer)
add_test(NAME install_consumer
  COMMAND ${CMAKE_COMMAND}
    -DBINARY_DIR=${CMAKE_BINARY_DIR} -DSOURCE_DIR=${CMAKE_CURRENT_SOURCE_DIR}/install_consumer
    -DWORK_DIR=${_consumer_dir} -DTRIAL=${SMDEBUG_TEST_DATA_DIR}/conformance/cases/pt_train_eval/trial
    -DEXPECTED_FILE=${SMDEBUG_TEST_DATA_DIR}/conformance/cases/pt_train_eval/expected.json
    -P ${CMAKE_CURRENT_SOURCE_DIR}/cmake/install_consumer.cmake.script)
set_tests_properties(install_consumer PROPERTIES LABELS install TIMEOUT 900 COST 2000)  # compiles: start it first
unset(_consumer_dir)
