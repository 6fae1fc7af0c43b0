#!/usr/bin/env bash
# Sanitizer builds of the test suite (issue 12.2):
#   scripts/test-sanitizers.sh asan   AddressSanitizer + UndefinedBehaviorSanitizer build of the whole
#                                     unit test suite (build-asan/), then runs it;
#   scripts/test-sanitizers.sh tsan   ThreadSanitizer build of the concurrency tests
#                                     (build-tsan/bin/smdebug_concurrency_tests), then runs them;
#   scripts/test-sanitizers.sh        both.
# Any sanitizer report fails the run (halt_on_error). Extra arguments after the mode go to the
# test program (Catch2 test specs). Builds with g++ (or $CXX); -O1 keeps builds and runs fast.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-all}
[ $# -gt 0 ] && shift
jobs=$(nproc)
launcher=$(command -v ccache >/dev/null && echo -DCMAKE_CXX_COMPILER_LAUNCHER=ccache || true)
common=(-DCMAKE_BUILD_TYPE=None -DSMDEBUG_BUILD_TOOLS=ON -DSMDEBUG_BUILD_BENCHMARKS=OFF -DSMDEBUG_BUILD_EXAMPLES=OFF $launcher)

run_asan() {
  local flags="-O1 -g1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined"
  cmake -S . -B build-asan "${common[@]}" -DSMDEBUG_SANITIZE=address \
    -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
  # The CLI and the conformance runner too: unit tests run them (and so check them under ASan).
  cmake --build build-asan -j"$jobs" --target smdebug_tests smdebug_cli conformance_runner
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1:detect_stack_use_after_return=0 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    build-asan/bin/smdebug_tests "$@"
}

run_tsan() {
  local flags="-O1 -g1 -fsanitize=thread"
  cmake -S . -B build-tsan "${common[@]}" -DSMDEBUG_SANITIZE=thread \
    -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread" >/dev/null
  cmake --build build-tsan -j"$jobs" --target smdebug_concurrency_tests
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 build-tsan/bin/smdebug_concurrency_tests "$@"
}

case $mode in
  asan) run_asan "$@" ;;
  tsan) run_tsan "$@" ;;
  all) run_asan && run_tsan ;;
  *) echo "usage: $0 [asan|tsan|all] [test specs...]" >&2; exit 2 ;;
esac
