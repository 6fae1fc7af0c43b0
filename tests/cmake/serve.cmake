# `smdebug serve` (docs/serve.md), label `serve`:
#   serve.api      tests/serve/api_check.js: every endpoint of the JSON API on the conformance trials,
#                  compared with the library's answers through the CLI; the refusals (404, 400, 403, 405)
#   serve.browser  tests/serve/browser_check.js: the page in Debian's chromium driven by puppeteer-core
#                  (pinned in tests/serve/package-lock.json; `npm ci` there — scripts/test.sh does it —
#                  with PUPPETEER_SKIP_DOWNLOAD: no browser is downloaded); a job written by the Hook
#                  (crash_writer) while the page is open; hostile names; a foreign Host
# node, chromium or puppeteer-core missing: the tests fail, never skip.
if(TARGET smdebug_cli AND SMDEBUG_SERVE)
  find_program(SMDEBUG_NODE_EXECUTABLE node)
  find_program(SMDEBUG_CHROMIUM_EXECUTABLE NAMES chromium chromium-browser)
  set(_cases "${SMDEBUG_TEST_DATA_DIR}/conformance/cases")
  if(SMDEBUG_NODE_EXECUTABLE)
    add_test(NAME serve.api COMMAND "${SMDEBUG_NODE_EXECUTABLE}" "${CMAKE_CURRENT_SOURCE_DIR}/serve/api_check.js"
                                    $<TARGET_FILE:smdebug_cli> "${_cases}" $<TARGET_FILE:make_analysis_trials>
                                    "${CMAKE_CURRENT_BINARY_DIR}/serve-api")
  else()
    smdebug_missing_test(serve.api "node is needed for the serve tests (Node 20 comes with the machine)")
  endif()
  if(SMDEBUG_NODE_EXECUTABLE AND SMDEBUG_CHROMIUM_EXECUTABLE AND TARGET crash_writer)
    add_test(NAME serve.browser COMMAND "${SMDEBUG_NODE_EXECUTABLE}" "${CMAKE_CURRENT_SOURCE_DIR}/serve/browser_check.js"
                                        $<TARGET_FILE:smdebug_cli> $<TARGET_FILE:crash_writer> "${_cases}"
                                        "${CMAKE_CURRENT_BINARY_DIR}/serve-browser")
    set_tests_properties(serve.browser PROPERTIES ENVIRONMENT
                         "SMDEBUG_CHROMIUM=${SMDEBUG_CHROMIUM_EXECUTABLE};SMDEBUG_ANALYSIS_TRIALS=$<TARGET_FILE:make_analysis_trials>")
  else()
    smdebug_missing_test(serve.browser "node and Debian's chromium are needed for the browser tests of smdebug serve (scripts/setup-deps.sh)")
  endif()
  set_tests_properties(serve.api serve.browser PROPERTIES LABELS serve TIMEOUT 300)
  unset(_cases)
endif()
