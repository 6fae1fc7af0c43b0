# Manifests (compacted index): conformance.compacted compacts a copy of every vendored conformance
# case with `smdebug compact` and runs the conformance runner on it (tests/compact_conformance.sh);
# conformance.s3.compacted does the same through S3 (s3rver, see s3.cmake).
add_test(NAME conformance.compacted
         COMMAND bash "${CMAKE_CURRENT_SOURCE_DIR}/compact_conformance.sh" $<TARGET_FILE:smdebug_cli> $<TARGET_FILE:conformance_runner>
                 "${SMDEBUG_TEST_DATA_DIR}/conformance/cases")
set_tests_properties(conformance.compacted PROPERTIES LABELS "conformance;manifest" TIMEOUT 600)
add_test(NAME conformance.s3.compacted
         COMMAND bash "${CMAKE_CURRENT_SOURCE_DIR}/s3rver/run-with-s3rver.sh" run "${CMAKE_BINARY_DIR}/s3rver-conformance-compacted"
                 bash "${CMAKE_CURRENT_SOURCE_DIR}/compact_conformance.sh" $<TARGET_FILE:smdebug_cli> $<TARGET_FILE:conformance_runner>
                 "${SMDEBUG_TEST_DATA_DIR}/conformance/cases" s3)
set_tests_properties(conformance.s3.compacted PROPERTIES FIXTURES_REQUIRED s3rver LABELS "s3rver;conformance;manifest" TIMEOUT 900 COST 1000)
