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
# errors; ccache when present. Prints the wall and CPU time of each part.
# The test cases are split round-robin into $SMDEBUG_SANITIZE_SHARDS lists (default 4), each run by
# one process (scripts/run-catch-shard.sh checks that every listed case ran), at most
# $SMDEBUG_SANITIZE_JOBS (default: the cores) at once, beside the conformance runner: the test
# programs run one case at a time, so one process leaves a core idle.
# SMDEBUG_SANITIZE_STEP=build only builds; =jobs builds nothing and prints the run's jobs
# ("NAME<TAB>COMMAND" lines, for scripts/run-jobs.sh: scripts/test-hardening.sh runs the ASan,
# TSan and fuzz jobs in one pool).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-all}
[ $# -gt 0 ] && shift
jobs=${SMDEBUG_SANITIZE_JOBS:-$(nproc)}
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
common=(-DCMAKE_BUILD_TYPE=None -DSMDEBUG_WERROR=ON -DSMDEBUG_BUILD_TESTS=ON -DSMDEBUG_BUILD_TOOLS=ON
        -DSMDEBUG_BUILD_BENCHMARKS=OFF -DSMDEBUG_BUILD_EXAMPLES=OFF -DSMDEBUG_WITH_TORCH=OFF -DSMDEBUG_SERVE=OFF "${launcher[@]}")
# Cases that need an external server (run under tests/s3rver/run-with-s3rver.sh) or are hidden.
default_spec=('~[s3rver]~[.]')

# GCC 12 reports -Wmaybe-uninitialized false positives inside libstdc++'s <regex> and <functional>
# when sanitizer instrumentation changes inlining (GCC documents that -fsanitize=address may cause
# more false-positive warnings); the release build keeps the warning (with -Werror).
nowarn="-Wno-maybe-uninitialized"

step=${SMDEBUG_SANITIZE_STEP:-all}
shards=${SMDEBUG_SANITIZE_SHARDS:-4}
root=$(pwd)
phase() {  # phase NAME COMMAND...: runs COMMAND, prints its wall and CPU time (user + sys of all it ran)
  local name=$1; shift
  local TIMEFORMAT="test-sanitizers.sh: $name took %0R s wall, %0U s user + %0S s sys CPU"
  time "$@"
}

# jobs_for BUILD_DIR PROGRAM ENV SPEC...: lists the cases SPEC selects, splits them round-robin into
# $shards name lists and prints one run-jobs.sh line per non-empty list.
jobs_for() {
  local dir=$1 program=$2 env=$3; shift 3
  local listdir=$root/$dir/shards
  rm -rf "$listdir"; mkdir -p "$listdir"
  "$root/$dir/bin/$program" "$@" --list-test-names-only >"$listdir/all" || true
  [ -s "$listdir/all" ] || { echo "test-sanitizers.sh: $program lists no test case for $*" >&2; return 1; }
  awk -v n="$shards" -v d="$listdir" 'NF { print > (d "/" (NR - 1) % n) }' "$listdir/all"
  local f
  for f in "$listdir"/[0-9]*; do
    [ -e "$f" ] || continue
    printf '%s\t%s\n' "${dir#build-}-$(basename "$f")" "$env '$root/scripts/run-catch-shard.sh' '$root/$dir/bin/$program' '$f'"
  done
}

asan_env="ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1:detect_stack_use_after_return=0:strict_string_checks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1"
tsan_env="TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1"

build_asan() {
  # -O0: ASan + UBSan at -O1 cost about twice the compile time (330 against 166 CPU s for
  # test_rules.cpp) for programs that run a few minutes; they find the same errors at -O0.
  # -fno-sanitize=alignment,null: those two checks at every member access are a third of the
  # remaining compile time (test_query.cpp: 120 -> 91 CPU s; ASan alone 75); a null dereference
  # is still ASan's SEGV report, and the fuzz targets (clang, all of UBSan) check alignment in
  # every parser, where unaligned reads of file bytes could happen.
  local flags="-O0 -g1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize=alignment,null -fno-sanitize-recover=all $nowarn"
  cmake -S . -B build-asan "${common[@]}" -DSMDEBUG_SANITIZE=address -DSMDEBUG_ASAN_ALL="${SMDEBUG_ASAN_ALL:-OFF}" \
    -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
  cmake --build build-asan -j"$jobs" --target smdebug_asan_tests
}
asan_jobs() {
  local spec=("$@"); [ ${#spec[@]} -gt 0 ] || spec=("${default_spec[@]}")
  jobs_for build-asan smdebug_asan_tests "$asan_env" "${spec[@]}"
  if [ $# -eq 0 ]; then
    printf '%s\t%s\n' asan-conformance "$asan_env '$root/build-asan/bin/conformance_runner' '$root/tests/data/conformance/cases' --quiet"
  fi
}

build_tsan() {
  # -Wno-tsan: GCC warns that TSan does not model std::atomic_thread_fence, which Boost.Asio's
  # std_fenced_block uses around handler calls (third-party code; its cross-thread hand-offs go
  # through the scheduler's mutex, which TSan sees).
  local flags="-O1 -g1 -fsanitize=thread $nowarn -Wno-tsan"
  cmake -S . -B build-tsan "${common[@]}" -DSMDEBUG_SANITIZE=thread \
    -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread" >/dev/null
  cmake --build build-tsan -j"$jobs" --target smdebug_tsan_tests
}
tsan_jobs() {
  # Cases that run the CLI or the conformance runner as programs are left to the ASan build; load
  # tests (busy threads beside a job, [load]) to the release build, where they take seconds.
  local spec=("$@"); [ ${#spec[@]} -gt 0 ] || spec=('~[s3rver]~[.]~[cli]~[conformance]~[load]')
  jobs_for build-tsan smdebug_tsan_tests "$tsan_env" "${spec[@]}"
}

run() {  # run asan|tsan [SPEC...]: builds (unless STEP=jobs), then runs or prints the jobs
  local m=$1; shift
  case $step in
    jobs) "${m}_jobs" "$@"; return ;;
    build) phase "$m build" "build_$m"; return ;;
  esac
  phase "$m build" "build_$m"
  "${m}_jobs" "$@" >"build-$m/jobs.tsv"
  phase "$m run" scripts/run-jobs.sh "${SMDEBUG_SANITIZE_RUN_JOBS:-$(nproc)}" "build-$m/jobs.tsv" "build-$m/logs"
}

case $mode in
  asan|tsan) run "$mode" "$@" ;;
  all) run asan && run tsan ;;
  *) echo "usage: $0 [asan|tsan|all] [test specs...]" >&2; exit 2 ;;
esac
