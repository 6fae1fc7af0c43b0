#!/usr/bin/env bash
# CI's hardening pass (issue 12), run by .ci/run after scripts/test.sh:
#   build  the ASan + UBSan build (build-asan/) and the TSan build (build-tsan/) of
#          scripts/test-sanitizers.sh, and the libFuzzer build (build-fuzz/, tests/fuzz/run.sh build),
#          side by side;
#   run    in one pool of as many processes as cores (scripts/run-jobs.sh): the ASan test cases
#          (split into shards, minus the s3rver cases) and every conformance case under ASan, the
#          TSan test cases (shards), and every fuzz target's regression inputs followed by SECONDS
#          of fuzzing (SECONDS = $SMDEBUG_CI_FUZZ_SECONDS, default 5);
#   all    both (the default).
# .ci/run starts `build` at idle priority while scripts/test.sh runs, so that the sanitizer
# compiles use the cores the tests of scripts/test.sh leave idle; `run` then finds them built.
# Any sanitizer report, failing test, regression input or fuzz finding fails the run. Installs
# clang-14 and libclang-rt-14-dev (libFuzzer) when missing. Prints the wall and CPU time of each step.
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
start=$(date +%s)
trap 'echo "scripts/test-hardening.sh $what: $(( $(date +%s) - start )) s wall time"' EXIT
phase() {  # phase NAME COMMAND...: runs COMMAND, prints its wall and CPU time (user + sys of all it ran)
  local name=$1; shift
  local TIMEFORMAT="scripts/test-hardening.sh: $name took %0R s wall, %0U s user + %0S s sys CPU"
  time "$@"
}

install_clang() {
  local missing=() p
  for p in clang-14 libclang-rt-14-dev; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]})); then
    local SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
}

build() {
  # The three builds run side by side (each -j<cores>): one build alone is a chain of a few long
  # translation units (ASan's largest takes 100 s), so it keeps one core busy at a time, and idle
  # cores are all that .ci/run gives this build while scripts/test.sh runs.
  install_clang
  local pids=() pid failed=0
  SMDEBUG_SANITIZE_STEP=build phase "asan build" scripts/test-sanitizers.sh asan & pids+=($!)
  SMDEBUG_SANITIZE_STEP=build phase "tsan build" scripts/test-sanitizers.sh tsan & pids+=($!)
  phase "fuzz build" tests/fuzz/run.sh build & pids+=($!)
  for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
  return "$failed"
}

run() {
  local jobs=build-hardening/jobs.tsv t seconds=${SMDEBUG_CI_FUZZ_SECONDS:-5}
  mkdir -p build-hardening
  {
    SMDEBUG_SANITIZE_STEP=jobs scripts/test-sanitizers.sh tsan
    SMDEBUG_SANITIZE_STEP=jobs scripts/test-sanitizers.sh asan
    for t in $(tests/fuzz/run.sh list); do
      printf 'fuzz-%s\tSMDEBUG_FUZZ_NO_BUILD=1 %q %s %s\n' "$t" "$PWD/tests/fuzz/run.sh" "$seconds" "$t"
    done
  } >"$jobs"
  phase "sanitizer and fuzz runs" scripts/run-jobs.sh "${SMDEBUG_HARDENING_JOBS:-$(nproc)}" "$jobs" build-hardening/logs
}

case $what in
  build) build ;;
  run) run ;;
  all) build; run ;;
  *) echo "usage: $0 [build|run|all]" >&2; exit 2 ;;
esac
