# Sanitizer builds (scripts/test-sanitizers.sh configures with -DSMDEBUG_SANITIZE=address|thread).
# Each compiles a chosen set of test TUs into one program, so that CI does not build the suite twice.
set(SMDEBUG_SANITIZE "" CACHE STRING "Sanitizer build of scripts/test-sanitizers.sh (address or thread)")
option(SMDEBUG_ASAN_ALL "ASan build: every area, not only CI's selection" OFF)

function(smdebug_sanitizer_tests target)
  list(TRANSFORM ARGN PREPEND ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_)
  list(TRANSFORM ARGN APPEND .cpp)
  add_executable(${target} ${ARGN} $<TARGET_OBJECTS:smdebug_catch_main>)
  # The areas' unity units of tests/CMakeLists.txt (the UNITY_GROUP of each source).
  set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_MODE GROUP)
  # smdebug::compiled: the library's definitions compile once per sanitizer build (the ASan build's
  # CLI needs them anyway) rather than again in each unity unit. Measured 2026-12-02 (build alone,
  # no ccache): ASan 333 against 352 CPU s; TSan about the same, 130 against 126. The conformance
  # runner stays header-only.
  target_link_libraries(${target} PRIVATE smdebug::compiled smdebug_warnings Catch2::Catch2)
  target_compile_definitions(${target} PRIVATE
    SMDEBUG_TEST_DATA_DIR="${SMDEBUG_TEST_DATA_DIR}"
    SMDEBUG_SHARED_DIR="${SMDEBUG_TEST_DATA_DIR}"
    SMDEBUG_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    SMDEBUG_BIN_DIR="${CMAKE_BINARY_DIR}/bin")
endfunction()

if(SMDEBUG_SANITIZE STREQUAL "address" AND TARGET smdebug_catch_main)
  # AddressSanitizer + UBSan: the parsers, stores, queries, fault injection (hostile HTTP/S3
  # answers through the transport) and rules, with the CLI and the conformance runner they run.
  # Chosen to keep CI's time in bounds: the writer runs under TSan; net_s3/net_sigv4 (signing and
  # the HTTP codec) are covered by the fuzz targets' ASan builds; test_cli and test_speed stay in
  # the release run. SMDEBUG_ASAN_ALL=ON scripts/test-sanitizers.sh asan builds them all.
  if(SMDEBUG_ASAN_ALL)
    smdebug_sanitizer_tests(smdebug_asan_tests format storage query net_s3 net_sigv4 faults rules writer)
  else()
    smdebug_sanitizer_tests(smdebug_asan_tests format storage query faults rules)
  endif()
  add_dependencies(smdebug_asan_tests smdebug_cli conformance_runner)
elseif(SMDEBUG_SANITIZE STREQUAL "thread" AND TARGET smdebug_catch_main)
  # ThreadSanitizer: the areas that run threads (many readers on one Trial, refresh while reading,
  # many Hooks, the background writer).
  smdebug_sanitizer_tests(smdebug_tsan_tests concurrency realtime writer)
endif()
