#!/usr/bin/env bash
# Sets up, builds and runs the quickstart: a small C++ training job that saves its tensors through
# the Hook, then reads them back through a Trial. Re-runnable: every run writes a fresh trial.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-deps.sh
# uPlot, pinned, for the charts `smdebug serve` embeds (docs/serve.md); without npm the page has no charts.
if command -v npm >/dev/null; then (cd tools/serve/web && npm ci --no-audit --no-fund --loglevel=error); fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build --target quickstart smdebug_cli -j"$(nproc)"
out=$(build/bin/quickstart "$@" | tee /dev/stderr | sed -n 's/^trial written to //p' | tail -1)
if [ -n "${out}" ]; then
  echo
  build/bin/smdebug verify "${out}"
fi
