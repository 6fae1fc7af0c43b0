# compile_bench.quick: benchmarks/compile/run.sh --quick compiles every consumer TU of
# benchmarks/compile/ once in separate mode at -O0: that the compile benchmark works, not its
# figures (benchmarks/RESULTS.md). <smdebug/src.hpp> is compiled by the build (smdebug::compiled),
# and <smdebug/smdebug.hpp> header-only by install_consumer and the header-only conformance runner.
add_test(NAME compile_bench.quick COMMAND ${PROJECT_SOURCE_DIR}/benchmarks/compile/run.sh --quick)
set_tests_properties(compile_bench.quick PROPERTIES LABELS benchmark TIMEOUT 600
                     ENVIRONMENT "CXX=${CMAKE_CXX_COMPILER}")
