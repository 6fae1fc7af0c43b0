# The examples run on real data (built when SMDEBUG_BUILD_EXAMPLES is on, as in CI):
#   example.read_local           on the vendored pt_train_eval trial; its counts, the loss's steps and
#                                its first value must equal the reference smdebug's (expected.json);
#   example.realtime_watch       follows that (finished) trial to its end, one line per step;
#   example.realtime_watch.live  follows the quickstart while it trains and writes, from before the
#                                trial folder exists until the end marker, and must see every step;
#   example.read_s3              on the trial uploaded to s3rver (needs the s3rver fixture).
if(NOT SMDEBUG_BUILD_EXAMPLES)
  return()
endif()
set(_case ${SMDEBUG_TEST_DATA_DIR}/conformance/cases/pt_train_eval)
add_test(NAME example.read_local
  COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:read_local> -DCASE=${_case} -DTENSOR=CrossEntropyLoss_output_0
          -P ${CMAKE_CURRENT_SOURCE_DIR}/cmake/example_read_local.cmake.script)
add_test(NAME example.realtime_watch
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/examples.sh realtime $<TARGET_FILE:realtime_watch> ${_case})
add_test(NAME example.realtime_watch.live
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/examples.sh live $<TARGET_FILE:realtime_watch> $<TARGET_FILE:quickstart>
          $<TARGET_FILE:read_local> ${CMAKE_BINARY_DIR}/example-live)
add_test(NAME example.read_s3
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/s3rver/run-with-s3rver.sh run ${CMAKE_BINARY_DIR}/s3rver-examples
          bash ${CMAKE_CURRENT_SOURCE_DIR}/examples.sh s3 $<TARGET_FILE:read_s3> $<TARGET_FILE:conformance_runner> ${_case})
add_test(NAME example.full_disk
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/examples.sh fulldisk $<TARGET_FILE:quickstart> $<TARGET_FILE:custom_rule>
          $<TARGET_FILE:realtime_watch> ${CMAKE_BINARY_DIR}/example-full-disk)
# example.unwritable: every CLI command and example on a full disk, in a read-only folder and with
# standard output on /dev/full (tests/examples.sh unwritable; as root it mounts two small tmpfs).
add_test(NAME example.unwritable
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/examples.sh unwritable $<TARGET_FILE:smdebug_cli> $<TARGET_FILE:quickstart>
          $<TARGET_FILE:custom_rule> $<TARGET_FILE:read_local> $<TARGET_FILE:realtime_watch> ${_case} ${CMAKE_BINARY_DIR}/example-unwritable)
set_tests_properties(example.read_local example.realtime_watch example.realtime_watch.live example.full_disk example.unwritable
                     PROPERTIES LABELS examples TIMEOUT 300)
set_tests_properties(example.read_s3 PROPERTIES FIXTURES_REQUIRED s3rver LABELS "examples;s3rver" TIMEOUT 300)
unset(_case)
