# ThreadSanitizer build (scripts/test-sanitizers.sh tsan configures with -DSMDEBUG_SANITIZE=thread):
# the test areas that run threads (concurrency, realtime refresh, the writer and its background
# thread), so that TSan compiles three test TUs, not the whole suite.
set(SMDEBUG_SANITIZE "" CACHE STRING "Sanitizer build of scripts/test-sanitizers.sh (address or thread)")
if(SMDEBUG_SANITIZE STREQUAL "thread" AND TARGET smdebug_catch_main)
  add_executable(smdebug_tsan_tests
    ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_concurrency.cpp
    ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_realtime.cpp
    ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_writer.cpp
    $<TARGET_OBJECTS:smdebug_catch_main>)
  target_link_libraries(smdebug_tsan_tests PRIVATE smdebug::smdebug smdebug_warnings Catch2::Catch2)
  target_compile_definitions(smdebug_tsan_tests PRIVATE
    SMDEBUG_TEST_DATA_DIR="${SMDEBUG_TEST_DATA_DIR}"
    SMDEBUG_SHARED_DIR="${SMDEBUG_TEST_DATA_DIR}"
    SMDEBUG_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    SMDEBUG_BIN_DIR="${CMAKE_BINARY_DIR}/bin")
endif()
