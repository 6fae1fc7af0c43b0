# The conformance cases through S3Store, against s3rver over HTTP and HTTPS (see s3.cmake).
add_test(NAME conformance.s3
         COMMAND bash "${CMAKE_CURRENT_SOURCE_DIR}/s3rver/run-with-s3rver.sh" run
                 "${CMAKE_BINARY_DIR}/s3rver-conformance"
                 bash "${CMAKE_CURRENT_SOURCE_DIR}/conformance_s3.sh"
                 $<TARGET_FILE:conformance_runner> "${SMDEBUG_TEST_DATA_DIR}/conformance/cases")
set_tests_properties(conformance.s3 PROPERTIES FIXTURES_REQUIRED s3rver LABELS "s3rver;conformance" TIMEOUT 900)
