# install + find_package(smdebug CONFIG) from a separate project, then run it on a conformance trial.
set(_consumer_dir ${CMAKE_BINARY_DIR}/install_consumer)
set(_trial ${SMDEBUG_SHARED_DIR}/conformance/cases/pt_train_eval/trial)
add_test(NAME install_consumer
  COMMAND ${CMAKE_COMMAND}
    -DBINARY_DIR=${CMAKE_BINARY_DIR} -DSOURCE_DIR=${CMAKE_CURRENT_SOURCE_DIR}/install_consumer
    -DWORK_DIR=${_consumer_dir} -DTRIAL=${_trial}
    -P ${CMAKE_CURRENT_SOURCE_DIR}/cmake/install_consumer.cmake.script)
