#!/usr/bin/env bash
# Sets up, builds everything (library tests, tools, examples, benchmarks) and runs the test suite:
# unit tests, the conformance cases, the SigV4 vectors, S3 tests against a local s3rver, and a
# find_package consumer of the installed package.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-deps.sh
if [ -f tests/s3rver/package.json ] && command -v npm >/dev/null; then
  (cd tests/s3rver && { npm ci --no-audit --no-fund --loglevel=error || npm install --no-audit --no-fund --loglevel=error; })
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)"
ctest --test-dir build --output-on-failure -j"$(nproc)" "$@"
