# `smdebug diagnose` / `smdebug diff` (docs/diagnose.md): make_analysis_trials writes the MLP trials
# (tests/analysis/analysis_trials.hpp, with the Hook) that the Python tests (python.package,
# python.dask: SMDEBUG_ANALYSIS_TRIALS) and the serve API test read. The unit tests
# (tests/unit/test_analysis.cpp) write the same trials in-process.
add_executable(make_analysis_trials ${CMAKE_CURRENT_SOURCE_DIR}/analysis/make_analysis_trials.cpp)
target_link_libraries(make_analysis_trials PRIVATE smdebug::local smdebug_warnings)
if(TARGET smdebug_tests)
  add_dependencies(smdebug_tests make_analysis_trials)
endif()
