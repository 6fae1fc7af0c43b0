#!/usr/bin/env bash
# CI's hardening pass, run by .ci/run after scripts/test.sh (issue 12):
#   1. scripts/test-sanitizers.sh asan  (ASan + UBSan build of the chosen test areas, the CLI and the
#      conformance runner; every conformance case);
#   2. scripts/test-sanitizers.sh tsan  (TSan build of the concurrency, realtime and writer tests);
#   3. tests/fuzz/run.sh SECONDS        (every fuzz target's regression inputs, then SECONDS of
#      fuzzing each; SECONDS = $SMDEBUG_CI_FUZZ_SECONDS, default 5).
# Any sanitizer report, failing test, regression input or fuzz finding fails the run. Installs
# clang-14 and libclang-rt-14-dev (libFuzzer) when missing. Prints the wall time of each step.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
trap 'echo "scripts/test-hardening.sh: $(( $(date +%s) - start )) s wall time"' EXIT
step() {
  local t0; t0=$(date +%s)
  "$@"
  echo "scripts/test-hardening.sh: '$*' took $(( $(date +%s) - t0 )) s"
}
step scripts/test-sanitizers.sh asan
step scripts/test-sanitizers.sh tsan

missing=()
for p in clang-14 libclang-rt-14-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
step tests/fuzz/run.sh "${SMDEBUG_CI_FUZZ_SECONDS:-5}"
