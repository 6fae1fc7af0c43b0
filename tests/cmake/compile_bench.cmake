# compile_bench.quick: benchmarks/compile/run.sh --quick compiles every consumer TU of
# benchmarks/compile/ in separate mode, <smdebug/smdebug.hpp> header-only and <smdebug/src.hpp>
# (-fsyntax-only): that the compile benchmark works, not its figures (benchmarks/RESULTS.md).
add_test(NAME compile_bench.quick COMMAND ${PROJECT_SOURCE_DIR}/benchmarks/compile/run.sh --quick)
set_tests_properties(compile_bench.quick PROPERTIES LABELS benchmark TIMEOUT 600
                     ENVIRONMENT "CXX=${CMAKE_CXX_COMPILER}")
