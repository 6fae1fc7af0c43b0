# ThreadSanitizer build (scripts/test-sanitizers.sh tsan configures with -DSMDEBUG_SANITIZE=thread):
# the concurrency tests alone, so that TSan compiles one test TU, not the whole suite.
set(SMDEBUG_SANITIZE "" CACHE STRING "Sanitizer build of scripts/test-sanitizers.sh (address or thread)")
if(SMDEBUG_SANITIZE STREQUAL "thread" AND TARGET smdebug_catch_main)
  add_executable(smdebug_concurrency_tests ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_concurrency.cpp $<TARGET_OBJECTS:smdebug_catch_main>)
  target_link_libraries(smdebug_concurrency_tests PRIVATE smdebug::smdebug smdebug_warnings Catch2::Catch2)
  add_test(NAME concurrency_tsan COMMAND smdebug_concurrency_tests)
endif()
