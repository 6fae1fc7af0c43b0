#!/usr/bin/env bash
# CI entry point and the README's second command: installs what is missing, then configures,
# builds and tests with the `test` preset (the release configuration at -O1; warnings are errors) — what
# `cmake --workflow --preset test` does. Runs every test: unit tests (one CTest per Catch2 test
# case), the vendored conformance cases and SigV4 vectors, the S3 tests against s3rver, the
# examples, the installed package, the packaging recipes and the documents' links.
# Extra arguments go to ctest (for example -L unit, -R conformance, -j4).
# Prints each phase's wall and CPU time (user + sys of everything the phase ran).
# Under CI (CI=true) the benchmarks, which no test runs, are only compiled with -fsyntax-only
# (-DSMDEBUG_BENCHMARKS_COMPILE_CHECK=ON): CI checks that they compile, not their figures.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
trap 'echo "scripts/test.sh: $(( $(date +%s) - start )) s wall time"' EXIT
phase() {  # phase NAME COMMAND...: runs COMMAND, prints its wall and CPU time
  local name=$1; shift
  local TIMEFORMAT="scripts/test.sh: $name took %0R s wall, %0U s user + %0S s sys CPU"
  time "$@"
}
npm_ci() {  # s3rver (S3 tests), uPlot (embedded in `smdebug serve`), puppeteer-core (its browser tests; no browser download)
  command -v npm >/dev/null || return 0
  local dir
  for dir in tests/s3rver tools/serve/web tests/serve; do
    [ -f "$dir/package.json" ] || continue
    (cd "$dir" && { PUPPETEER_SKIP_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error || PUPPETEER_SKIP_DOWNLOAD=1 npm install --no-audit --no-fund --loglevel=error; })
  done
}
phase setup-deps scripts/setup-deps.sh
phase "npm ci" npm_ci
options=(-DSMDEBUG_WITH_TORCH=ON -DSMDEBUG_SERVE_CHARTS=ON)  # serve.browser checks the charts: uPlot must be embedded
if command -v ccache >/dev/null; then options+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
if [ "${CI:-}" = true ]; then options+=(-DSMDEBUG_BENCHMARKS_COMPILE_CHECK=ON); else options+=(-DSMDEBUG_BENCHMARKS_COMPILE_CHECK=OFF); fi
phase configure cmake --preset test "${options[@]}"
phase build cmake --build --preset test -j"$(nproc)"
phase ctest ctest --preset test -j"$(nproc)" "$@"
