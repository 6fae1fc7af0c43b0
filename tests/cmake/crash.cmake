# Writer crash safety (issue 12.4): crash_driver runs crash_writer (a Hook) and kills it with
# SIGKILL at 100 random points, then races readers against a live writer for 5 s.
add_executable(crash_writer ${CMAKE_CURRENT_SOURCE_DIR}/crash/crash_writer.cpp)
target_link_libraries(crash_writer PRIVATE smdebug::compiled smdebug_warnings)
add_executable(crash_driver ${CMAKE_CURRENT_SOURCE_DIR}/crash/crash_driver.cpp)
target_link_libraries(crash_driver PRIVATE smdebug::compiled smdebug_warnings)
add_test(NAME crash_sigkill COMMAND crash_driver $<TARGET_FILE:crash_writer> 100 5)
set_tests_properties(crash_sigkill PROPERTIES TIMEOUT 600 LABELS "hardening")
