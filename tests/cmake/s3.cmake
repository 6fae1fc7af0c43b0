# S3 tests against s3rver 3.7.1 (tests/s3rver):
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
# The [s3rver] cases are not discovered as unit.* tests: they only run here, with a server. Without
# node, npm, openssl or bash these tests are still registered, and fail.
find_program(SMDEBUG_BASH_EXECUTABLE bash)
find_program(SMDEBUG_NODE_EXECUTABLE node)
find_program(SMDEBUG_OPENSSL_EXECUTABLE openssl)
set(_smdebug_s3rver_dir "${CMAKE_BINARY_DIR}/s3rver")
set(_smdebug_s3rver_script "${CMAKE_CURRENT_SOURCE_DIR}/s3rver/run-with-s3rver.sh")
if(SMDEBUG_BASH_EXECUTABLE AND SMDEBUG_NODE_EXECUTABLE AND SMDEBUG_OPENSSL_EXECUTABLE)
  add_test(NAME s3rver.install
           COMMAND "${SMDEBUG_BASH_EXECUTABLE}" "${_smdebug_s3rver_script}" install "${_smdebug_s3rver_dir}")
else()
  smdebug_missing_test(s3rver.install "the S3 tests need bash, node and openssl on PATH (see DEVELOPERS.md)")
endif()
add_test(NAME s3rver.s3store
         COMMAND bash "${_smdebug_s3rver_script}" run "${_smdebug_s3rver_dir}" $<TARGET_FILE:smdebug_tests> "[s3rver]")
add_test(NAME s3rver.stop COMMAND bash "${_smdebug_s3rver_script}" stop "${_smdebug_s3rver_dir}")
set_tests_properties(s3rver.install PROPERTIES FIXTURES_SETUP s3rver LABELS s3rver TIMEOUT 600)
set_tests_properties(s3rver.s3store PROPERTIES FIXTURES_REQUIRED s3rver LABELS s3rver TIMEOUT 600 COST 500)
set_tests_properties(s3rver.stop PROPERTIES FIXTURES_CLEANUP s3rver LABELS s3rver TIMEOUT 60)
unset(_smdebug_s3rver_dir)
unset(_smdebug_s3rver_script)
