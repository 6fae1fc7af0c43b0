# S3 tests against s3rver 3.7.1 (tests/s3rver; see shared/s3-testing.md).
#   s3rver.install  (FIXTURES_SETUP)    installs s3rver with `npm ci` into <build>/s3rver unless
#                                       tests/s3rver/node_modules already has it;
#   s3rver.s3store                      runs the [s3rver] cases of smdebug_tests under
#                                       tests/s3rver/run-with-s3rver.sh, which starts s3rver over
#                                       HTTP and over HTTPS (a throw-away self-signed certificate
#                                       made with openssl in <build>/s3rver), exports
#                                       SMDEBUG_S3RVER_ENDPOINT, SMDEBUG_S3RVER_HTTPS_ENDPOINT and
#                                       SMDEBUG_S3RVER_CA (also written to <build>/s3rver/endpoints.env),
#                                       runs the cases and stops both servers;
#   s3rver.stop     (FIXTURES_CLEANUP)  stops any server a killed run left behind.
# Without node, openssl or bash nothing is registered; the [s3rver] cases then skip themselves
# in unit_tests because SMDEBUG_S3RVER_ENDPOINT is unset.
find_program(SMDEBUG_NODE_EXECUTABLE node)
find_program(SMDEBUG_OPENSSL_EXECUTABLE openssl)
find_program(SMDEBUG_BASH_EXECUTABLE bash)
if(TARGET smdebug_tests AND SMDEBUG_NODE_EXECUTABLE AND SMDEBUG_OPENSSL_EXECUTABLE AND SMDEBUG_BASH_EXECUTABLE)
  set(_smdebug_s3rver_dir "${CMAKE_BINARY_DIR}/s3rver")
  set(_smdebug_s3rver_script "${CMAKE_CURRENT_SOURCE_DIR}/s3rver/run-with-s3rver.sh")
  add_test(NAME s3rver.install
           COMMAND "${SMDEBUG_BASH_EXECUTABLE}" "${_smdebug_s3rver_script}" install "${_smdebug_s3rver_dir}")
  add_test(NAME s3rver.s3store
           COMMAND "${SMDEBUG_BASH_EXECUTABLE}" "${_smdebug_s3rver_script}" run "${_smdebug_s3rver_dir}"
                   $<TARGET_FILE:smdebug_tests> "[s3rver]")
  add_test(NAME s3rver.stop
           COMMAND "${SMDEBUG_BASH_EXECUTABLE}" "${_smdebug_s3rver_script}" stop "${_smdebug_s3rver_dir}")
  set_tests_properties(s3rver.install PROPERTIES FIXTURES_SETUP s3rver LABELS s3rver TIMEOUT 600)
  set_tests_properties(s3rver.s3store PROPERTIES FIXTURES_REQUIRED s3rver LABELS s3rver TIMEOUT 600)
  set_tests_properties(s3rver.stop PROPERTIES FIXTURES_CLEANUP s3rver LABELS s3rver TIMEOUT 60)
  unset(_smdebug_s3rver_dir)
  unset(_smdebug_s3rver_script)
else()
  message(STATUS "smdebug: node, openssl or bash not found; the s3rver tests are not registered")
endif()
