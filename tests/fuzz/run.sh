#!/usr/bin/env bash
# Builds the libFuzzer binary and runs every fuzz target (or the ones named) for SECONDS each.
#
#   tests/fuzz/run.sh SECONDS [TARGET...]
#   tests/fuzz/run.sh build             only configures and builds
#   tests/fuzz/run.sh list              prints the targets' names
#
# Prints one line per target (executions, findings) and a closing "N passed, M failed" line; a
# target passes when it found nothing. Before fuzzing, every checked-in regression input of the
# target (tests/fuzz/regressions/<target>/) is replayed and must pass. Corpora grow across runs in
# $SMDEBUG_FUZZ_DIR (default build-fuzz) /corpus/<target>, seeded from tests/fuzz/seeds/<target>
# and the vendored conformance trials; findings are written to .../findings/<target>/; every run
# appends "target executions findings seconds" to .../fuzz-stats.tsv (the running totals).
# Environment: CXX (default clang++-14 or clang++), SMDEBUG_FUZZ_DIR, SMDEBUG_FUZZ_ARGS (extra
# libFuzzer flags), SMDEBUG_FUZZ_NO_BUILD=1 (use the binary as built). Run long passes under `nice -n 19`.
set -euo pipefail
all_targets=(event_record index_file collections_file s3_xml http_response aws_profile credentials_json hook_config names rule_params manifest aws_query_xml index_ingest)
if [ "${1:-}" = list ]; then
  printf '%s\n' "${all_targets[@]}"
  exit 0
fi
if [ $# -lt 1 ] || ! [[ "$1" =~ ^([0-9]+|build)$ ]]; then
  echo "usage: $0 SECONDS [TARGET...] | build | list" >&2
  exit 2
fi
seconds=$1
shift
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=${SMDEBUG_FUZZ_DIR:-$root/build-fuzz}
cxx=${CXX:-$(command -v clang++-14 || command -v clang++ || true)}
if [ -z "$cxx" ]; then
  echo "run.sh: clang++ not found (apt-get install clang-14 libclang-rt-14-dev)" >&2
  exit 1
fi

if [ ! -f "$dir/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$dir" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DSMDEBUG_BUILD_FUZZERS=ON -DSMDEBUG_BUILD_TESTS=OFF -DSMDEBUG_BUILD_TOOLS=OFF \
    -DSMDEBUG_BUILD_BENCHMARKS=OFF -DSMDEBUG_BUILD_EXAMPLES=OFF \
    $(command -v ccache >/dev/null && echo -DCMAKE_CXX_COMPILER_LAUNCHER=ccache) >/dev/null
fi
[ -n "${SMDEBUG_FUZZ_NO_BUILD:-}" ] || cmake --build "$dir" -j"$(nproc)" --target fuzzers >/dev/null
[ "$seconds" != build ] || exit 0
bin=$dir/bin

targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")

conformance=$root/tests/data/conformance/cases
seed() {  # seed TARGET CORPUS: checked-in seeds plus files of the vendored conformance trials
  local t=$1 corpus=$2
  mkdir -p "$corpus"
  if [ -d "$root/tests/fuzz/seeds/$t" ]; then cp -n "$root/tests/fuzz/seeds/$t"/* "$corpus"/ 2>/dev/null || true; fi
  local where=
  case $t in
    event_record) where='*/events/*.tfevents' ;;
    index_file) where='*/index/*.json' ;;
    collections_file) where='*/collections/*.json' ;;
  esac
  if [ -n "$where" ] && [ -d "$conformance" ]; then
    find "$conformance" -type f -path "$where" | while read -r f; do
      cp -n "$f" "$corpus/conf_$(echo "$f" | md5sum | cut -c1-16)"
    done
  fi
}

passed=0
failed=0
for t in "${targets[@]}"; do
  corpus=$dir/corpus/$t
  findings=$dir/findings/$t
  mkdir -p "$findings"
  seed "$t" "$corpus"
  before=$(find "$findings" -type f | wc -l)
  status=ok
  # Checked-in regression inputs first: each must run clean.
  if [ -d "$root/tests/fuzz/regressions/$t" ] && [ -n "$(ls -A "$root/tests/fuzz/regressions/$t")" ]; then
    if ! "$bin/fuzz_$t" -runs=0 "$root/tests/fuzz/regressions/$t"/* >"$dir/$t.regressions.log" 2>&1; then
      status="regression failed (see $dir/$t.regressions.log)"
    fi
  fi
  log=$dir/$t.log
  set +e
  # shellcheck disable=SC2086
  "$bin/fuzz_$t" "$corpus" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$findings/" ${SMDEBUG_FUZZ_ARGS:-} >"$log" 2>&1
  rc=$?
  set -e
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  execs=${execs:-0}
  new=$(( $(find "$findings" -type f | wc -l) - before ))
  if [ $rc -ne 0 ] && [ "$new" -eq 0 ]; then new=1; fi
  printf '%s\t%s\t%s\t%s\n' "$t" "$execs" "$new" "$seconds" >>"$dir/fuzz-stats.tsv"
  if [ "$new" -gt 0 ] || [ "$status" != ok ]; then
    failed=$((failed + 1))
    printf '%-18s %12s executions  %d findings  FAILED %s (log %s, inputs in %s)\n' "$t" "$execs" "$new" \
      "$([ "$status" = ok ] || echo "$status")" "$log" "$findings"
  else
    passed=$((passed + 1))
    printf '%-18s %12s executions  0 findings\n' "$t" "$execs"
  fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
