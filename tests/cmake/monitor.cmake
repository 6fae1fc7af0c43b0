# cli.monitor: `smdebug monitor` follows a job that tests/cli/monitor_check.py writes step by step
# (two workers, a NaN and an all-zero step), scrapes /metrics after each step and parses it with
# python3-prometheus-client (its Prometheus text and OpenMetrics parsers), checks the firings, the
# stop-file action, the exit once the end marker is written, and the exit codes. Debian's
# /usr/bin/python3 with python3-numpy and python3-prometheus-client is required: missing, the test fails.
if(TARGET smdebug_cli)
  find_program(SMDEBUG_MONITOR_PYTHON NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
  if(NOT SMDEBUG_MONITOR_PYTHON)
    set(SMDEBUG_MONITOR_PYTHON python3)
  endif()
  add_test(NAME cli.monitor
           COMMAND "${SMDEBUG_MONITOR_PYTHON}" "${CMAKE_CURRENT_SOURCE_DIR}/cli/monitor_check.py" $<TARGET_FILE:smdebug_cli>
                   "${CMAKE_CURRENT_BINARY_DIR}/cli-monitor")
  set_tests_properties(cli.monitor PROPERTIES LABELS "unit;cli" TIMEOUT 300)
endif()

# example.monitor_recipe: the recipe of docs/monitoring.md run end to end (tests/cli/monitor_recipe.sh):
# a local webhook receiver, the monitor started before the quickstart trains, the findings posted,
# the exit once the job ended, and the TensorBoard export.
if(TARGET smdebug_cli AND TARGET quickstart)
  add_test(NAME example.monitor_recipe
           COMMAND bash "${CMAKE_CURRENT_SOURCE_DIR}/cli/monitor_recipe.sh" $<TARGET_FILE:smdebug_cli> $<TARGET_FILE:quickstart>
                   "${SMDEBUG_MONITOR_PYTHON}" "${CMAKE_CURRENT_BINARY_DIR}/example-monitor-recipe")
  set_tests_properties(example.monitor_recipe PROPERTIES LABELS examples TIMEOUT 300)
endif()
