#!/usr/bin/env bash
# CI entry point and the README's second command: installs what is missing, then configures,
# builds and tests with the `release` preset (warnings are errors) — what
# `cmake --workflow --preset release` does. Runs every test: unit tests (one CTest per Catch2 test
# case), the vendored conformance cases and SigV4 vectors, the S3 tests against s3rver, the
# examples, the installed package, the packaging recipes and the documents' links.
# Extra arguments go to ctest (for example -L unit, -R conformance, -j4).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
trap 'echo "scripts/test.sh: $(( $(date +%s) - start )) s wall time"' EXIT
scripts/setup-deps.sh
if [ -f tests/s3rver/package.json ] && command -v npm >/dev/null; then
  (cd tests/s3rver && { npm ci --no-audit --no-fund --loglevel=error || npm install --no-audit --no-fund --loglevel=error; })
fi
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake --preset release -DSMDEBUG_WITH_TORCH=ON "${launcher[@]}"
cmake --build --preset release -j"$(nproc)"
ctest --preset release -j"$(nproc)" "$@"
