# The CLI tests (tests/unit/test_cli.cpp) run the `smdebug` program and read its helper headers
# (tools/cli/...). cli.s3 runs every CLI command on every conformance trial over S3, against
# s3rver (tests/s3rver/run-with-s3rver.sh; the s3rver fixture comes from s3.cmake).
if(TARGET smdebug_tests AND TARGET smdebug_cli)
  add_dependencies(smdebug_tests smdebug_cli)
  target_include_directories(smdebug_tests PRIVATE ${PROJECT_SOURCE_DIR}/tools)
  find_program(SMDEBUG_NODE_EXECUTABLE node)
  find_program(SMDEBUG_OPENSSL_EXECUTABLE openssl)
  find_program(SMDEBUG_BASH_EXECUTABLE bash)
  if(SMDEBUG_NODE_EXECUTABLE AND SMDEBUG_OPENSSL_EXECUTABLE AND SMDEBUG_BASH_EXECUTABLE)
    add_test(NAME cli.s3
             COMMAND "${SMDEBUG_BASH_EXECUTABLE}" "${CMAKE_CURRENT_SOURCE_DIR}/s3rver/run-with-s3rver.sh" run
                     "${CMAKE_BINARY_DIR}/s3rver-cli" $<TARGET_FILE:smdebug_tests> "[.cli-s3]")
    set_tests_properties(cli.s3 PROPERTIES FIXTURES_REQUIRED s3rver LABELS s3rver TIMEOUT 900)
  endif()
endif()
