#!/usr/bin/env bash
# Sanitizer builds of the test suite (issue 12.2):
#   scripts/test-sanitizers.sh asan   AddressSanitizer + UndefinedBehaviorSanitizer build (build-asan/)
#                                     of bin/smdebug_asan_tests (the test areas listed in
#                                     tests/cmake/sanitizers.cmake), the CLI and the conformance runner;
#                                     runs the tests (minus the s3rver cases) and every conformance case;
#   scripts/test-sanitizers.sh tsan   ThreadSanitizer build (build-tsan/) of bin/smdebug_tsan_tests
#                                     (concurrency, realtime, writer), then runs them;
#   scripts/test-sanitizers.sh        both.
# Any sanitizer report fails the run (halt_on_error, -fno-sanitize-recover=all). Extra arguments
# after the mode go to the test program (Catch2 test specs). g++ (or $CXX), -O1 -g1, warnings are
# errors; ccache when present. Prints the wall time of each part.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-all}
[ $# -gt 0 ] && shift
jobs=${SMDEBUG_SANITIZE_JOBS:-$(nproc)}
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
common=(-DCMAKE_BUILD_TYPE=None -DSMDEBUG_WERROR=ON -DSMDEBUG_BUILD_TESTS=ON -DSMDEBUG_BUILD_TOOLS=ON
        -DSMDEBUG_BUILD_BENCHMARKS=OFF -DSMDEBUG_BUILD_EXAMPLES=OFF -DSMDEBUG_WITH_TORCH=OFF "${launcher[@]}")
# Cases that need an external server (run under tests/s3rver/run-with-s3rver.sh) or are hidden.
default_spec=('~[s3rver]~[.]')

# GCC 12 reports -Wmaybe-uninitialized false positives inside libstdc++'s <regex> and <functional>
# when sanitizer instrumentation changes inlining (GCC documents that -fsanitize=address may cause
# more false-positive warnings); the release build keeps the warning (with -Werror).
nowarn="-Wno-maybe-uninitialized"

elapsed() { echo "test-sanitizers.sh: $1 took $(( $(date +%s) - $2 )) s"; }

run_asan() {
  local t0; t0=$(date +%s)
  local flags="-O1 -g1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all $nowarn"
  cmake -S . -B build-asan "${common[@]}" -DSMDEBUG_SANITIZE=address -DSMDEBUG_ASAN_ALL="${SMDEBUG_ASAN_ALL:-OFF}" \
    -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
  cmake --build build-asan -j"$jobs" --target smdebug_asan_tests
  elapsed "asan build" "$t0"
  local spec=("$@"); [ ${#spec[@]} -gt 0 ] || spec=("${default_spec[@]}")
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1:detect_stack_use_after_return=0:strict_string_checks=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  t0=$(date +%s)
  build-asan/bin/smdebug_asan_tests "${spec[@]}"
  if [ $# -eq 0 ]; then
    build-asan/bin/conformance_runner tests/data/conformance/cases --quiet
  fi
  elapsed "asan run" "$t0"
}

run_tsan() {
  local t0; t0=$(date +%s)
  # -Wno-tsan: GCC warns that TSan does not model std::atomic_thread_fence, which Boost.Asio's
  # std_fenced_block uses around handler calls (third-party code; its cross-thread hand-offs go
  # through the scheduler's mutex, which TSan sees).
  local flags="-O1 -g1 -fsanitize=thread $nowarn -Wno-tsan"
  cmake -S . -B build-tsan "${common[@]}" -DSMDEBUG_SANITIZE=thread \
    -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread" >/dev/null
  cmake --build build-tsan -j"$jobs" --target smdebug_tsan_tests
  elapsed "tsan build" "$t0"
  # Cases that run the CLI or the conformance runner as programs are left to the ASan build; load
  # tests (busy threads beside a job, [load]) to the release build, where they take seconds.
  local spec=("$@"); [ ${#spec[@]} -gt 0 ] || spec=('~[s3rver]~[.]~[cli]~[conformance]~[load]')
  t0=$(date +%s)
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 build-tsan/bin/smdebug_tsan_tests "${spec[@]}"
  elapsed "tsan run" "$t0"
}

case $mode in
  asan) run_asan "$@" ;;
  tsan) run_tsan "$@" ;;
  all) run_asan && run_tsan ;;
  *) echo "usage: $0 [asan|tsan|all] [test specs...]" >&2; exit 2 ;;
esac
