#!/usr/bin/env bash
# Runs the examples for CTest (tests/cmake/examples.cmake) and checks what they print.
#   examples.sh realtime REALTIME_WATCH CASE_DIR
#   examples.sh live REALTIME_WATCH QUICKSTART READ_LOCAL WORK_DIR
#   examples.sh s3 READ_S3 CONFORMANCE_RUNNER CASE_DIR      (under tests/s3rver/run-with-s3rver.sh)
set -euo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
# expected_summary CASE_DIR KEY: a number from the summary line of the case's expected.json.
expected_summary() { grep -o "\"$2\": *[0-9]*" "$1/expected.json" | head -n1 | grep -o '[0-9]*$'; }

case "${1:-}" in
  realtime)
    watch="$2"; case_dir="$3"
    out="$("$watch" "$case_dir/trial" CrossEntropyLoss_output_0 --timeout 60)"
    echo "$out"
    steps="$(expected_summary "$case_dir" num_steps)"
    [[ "$(grep -c '^step ' <<<"$out")" == "$steps" ]] || fail "expected one line per step ($steps)"
    grep -q "^training ended after $steps steps$" <<<"$out" || fail "no end line for $steps steps"
    grep -q '^step 0 (TRAIN 0) CrossEntropyLoss_output_0 mean ' <<<"$out" || fail "step 0 shows no loss"
    ;;
  live)
    watch="$2"; quickstart="$3"; read_local="$4"; work="$5"
    rm -rf "$work"; mkdir -p "$work"
    trial="$work/trial"
    # The watcher starts before the trial exists and must follow the job to its end.
    "$watch" "$trial" CrossEntropyLoss_output_0 --timeout 120 >"$work/watch.out" 2>&1 &
    watcher=$!
    "$quickstart" --out "$trial" >"$work/quickstart.out" || { kill "$watcher" 2>/dev/null; fail "quickstart failed"; }
    wait "$watcher" || { cat "$work/watch.out"; fail "realtime_watch failed"; }
    cat "$work/watch.out"
    steps="$("$read_local" "$trial" | sed -n 's/^steps \([0-9]*\)$/\1/p')"
    [[ -n "$steps" && "$steps" -gt 0 ]] || fail "read_local found no steps in $trial"
    grep -q "^training ended after $steps steps$" "$work/watch.out" || fail "the watcher did not see all $steps steps"
    [[ "$(grep -c ' CrossEntropyLoss_output_0 mean ' "$work/watch.out")" -gt 0 ]] || fail "the watcher printed no loss"
    ;;
  s3)
    read_s3="$2"; runner="$3"; case_dir="$4"
    : "${SMDEBUG_S3RVER_ENDPOINT:?run under tests/s3rver/run-with-s3rver.sh}"
    export AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER AWS_REGION=us-east-1
    export AWS_ENDPOINT_URL="$SMDEBUG_S3RVER_ENDPOINT" SMDEBUG_TRAINING_END_DELAY_REFRESH=0
    unset AWS_PROFILE AWS_SESSION_TOKEN
    name="$(basename "$case_dir")"
    # Upload the trial with the conformance runner, given a copy of the case without queries.
    upload="$(mktemp -d)"; trap 'rm -rf "$upload"' EXIT
    mkdir "$upload/$name"; ln -s "$case_dir/trial" "$upload/$name/trial"
    echo '{"schema_version": 1, "case": "'"$name"'", "trial_dir": "trial", "blocks": []}' >"$upload/$name/expected.json"
    "$runner" "$upload/$name" --quiet --s3 "s3://smdebug-test/examples" >/dev/null
    out="$("$read_s3" "s3://smdebug-test/examples/$name" '^CrossEntropyLoss')"
    echo "$out"
    steps="$(expected_summary "$case_dir" num_steps)"
    grep -q "^trial s3://smdebug-test/examples/$name/\?: 1 worker(s), $steps steps$" <<<"$out" || fail "summary line"
    loss="$(grep '^CrossEntropyLoss_output_0:' <<<"$out")" || fail "no loss line"
    # One l2 norm per saved loss step: 0=..., 1=..., as many as the reference's tensor.steps.
    want="$(grep -o '{"args":{},"call":"tensor.steps","id":[0-9]*,"result":\[[0-9,]*\],"tensor":"CrossEntropyLoss_output_0"}' \
            "$case_dir/expected.json" | head -n1 | sed 's/.*"result":\[\([0-9,]*\)\].*/\1/' | tr ',' ' ')"
    got="$(tr ' ' '\n' <<<"${loss#*:}" | sed -n 's/=.*//p' | tr '\n' ' ' | sed 's/ $//')"
    [[ "$got" == "$want" ]] || fail "loss steps '$got', reference '$want'"
    ;;
  fulldisk)
    # The examples on a full disk: a file cannot grow past 1 KiB (RLIMIT_FSIZE with SIGXFSZ
    # ignored: write(2) returns EFBIG, as ENOSPC would). One line naming the failure, a non-zero
    # exit, never "terminate called" or a signal.
    quickstart="$2" custom_rule="$3" watch="$4" work="$5"
    rm -rf "$work"; mkdir -p "$work"
    for prog in "$quickstart --out $work/qs" "$custom_rule"; do
      set +e
      out="$(bash -c "trap '' XFSZ; ulimit -f 1; exec $prog" 2>&1)"; code=$?
      set -e
      echo "$prog -> exit $code: $(tail -n1 <<<"$out")"
      (( code != 0 && code < 128 )) || fail "$prog: exit $code (a signal or success on a full disk)"
      ! grep -q "terminate called" <<<"$out" || fail "$prog: terminate called"
    done
    set +e
    out="$("$watch" "$work" --timeout abc 2>&1)"; code=$?
    set -e
    [[ $code == 2 ]] && grep -q "timeout" <<<"$out" || fail "realtime_watch --timeout abc: exit $code: $out"
    ;;
  *) echo "usage: examples.sh realtime|live|s3|fulldisk ..." >&2; exit 2 ;;
esac
