#!/usr/bin/env bash
# Runs the examples for CTest (tests/cmake/examples.cmake) and checks what they print.
#   examples.sh realtime REALTIME_WATCH CASE_DIR
#   examples.sh live REALTIME_WATCH QUICKSTART READ_LOCAL WORK_DIR
#   examples.sh s3 READ_S3 CONFORMANCE_RUNNER CASE_DIR      (under tests/s3rver/run-with-s3rver.sh)
#   examples.sh unwritable SMDEBUG QUICKSTART CUSTOM_RULE READ_LOCAL REALTIME_WATCH CASE_DIR WORK_DIR
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
  unwritable)
    # Every CLI command and example where nothing can be written (issue 26 §4): a full disk, a
    # read-only folder, and a standard output on a full device (/dev/full). Each must end with a
    # line on stderr saying what could not be written and why, a non-zero exit that is not a
    # signal, never "terminate called", and no half-written output file left behind; what a
    # failed run did save stays readable.
    #   As root: a 64 KiB tmpfs filled to the last byte, and a tmpfs mounted read-only (root
    #   ignores permission bits). Otherwise: files limited to 0 bytes (ulimit -f 0, SIGXFSZ
    #   ignored: write(2) fails with EFBIG) and a folder without write permission.
    smdebug="$2" quickstart="$3" custom_rule="$4" read_local="$5" watch="$6" case_dir="$7" work="$8"
    trial="$case_dir/trial"
    full="$work/full" ro="$work/ro"
    mountpoint -q "$full" 2>/dev/null && umount "$full"
    mountpoint -q "$ro" 2>/dev/null && umount "$ro"
    rm -rf "$work"; mkdir -p "$full" "$ro"
    limit=""
    if [[ "$(id -u)" == 0 ]]; then
      trap 'umount "$full" 2>/dev/null; umount "$ro" 2>/dev/null; true' EXIT
      mount -t tmpfs -o size=64k tmpfs "$full" || fail "root could not mount a 64 KiB tmpfs for the full-disk case"
      mount -t tmpfs -o ro,size=64k tmpfs "$ro" || fail "root could not mount a read-only tmpfs"
      head -c 1048576 /dev/zero >"$full/filler" 2>/dev/null || true
      [[ "$(df --output=avail -k "$full" | tail -n1 | tr -d ' ')" == 0 ]] || fail "the tmpfs did not fill up"
    else
      chmod a-w "$ro"
      limit="ulimit -f 0;"
    fi
    checked=0
    # run_failing WHERE OUTPUT CMD...: CMD must fail cleanly; OUTPUT (a file, or "-") must not exist after.
    run_failing() {
      local where="$1" output="$2"; shift 2
      local lim="" code out
      [[ "$where" == full ]] && lim="$limit"
      set +e
      out="$(bash -c "trap '' XFSZ; $lim exec \"\$@\"" _ "$@" 2>&1 >/dev/null)"; code=$?
      set -e
      echo "[$where] $(basename "$1") ${*:2} -> exit $code: $(tail -n1 <<<"$out")"
      (( code != 0 && code < 128 )) || fail "$*: exit $code (success or a signal where nothing can be written)"
      ! grep -q "terminate called" <<<"$out" || fail "$*: terminate called"
      grep -qiE "no space left|read-only file system|permission denied|file too large|cannot write|cannot create" <<<"$out" ||
        fail "$*: no line says what could not be written: $out"
      [[ "$output" == - || ! -e "$output" ]] || fail "$*: left a half-written $output"
      checked=$((checked + 1))
    }
    # run_stdout_full CMD...: CMD's standard output is /dev/full.
    run_stdout_full() {
      local code out
      set +e
      out="$("$@" 2>&1 >/dev/full)"; code=$?
      set -e
      echo "[stdout full] $(basename "$1") ${*:2} -> exit $code: $(tail -n1 <<<"$out")"
      (( code != 0 && code < 128 )) || fail "$*: exit $code with a full standard output"
      ! grep -q "terminate called" <<<"$out" || fail "$*: terminate called"
      grep -qiE "standard output|no space left" <<<"$out" || fail "$*: no line says standard output failed: $out"
      checked=$((checked + 1))
    }
    loss=CrossEntropyLoss_output_0
    for where in full ro; do
      dir="${!where}"
      run_failing "$where" "$dir/v.npy" "$smdebug" value "$trial" "$loss" 0 --format npy --out "$dir/v.npy"
      run_failing "$where" "$dir/v.txt" "$smdebug" value "$trial" "$loss" 0 --out "$dir/v.txt"
      run_failing "$where" "$dir/p.svg" "$smdebug" plot "$trial" --tensor "$loss" --out "$dir/p.svg"
      run_failing "$where" "$dir/r.html" "$smdebug" report "$trial" --out "$dir/r.html"
      for fmt in csv jsonl; do
        run_failing "$where" "$dir/t.$fmt" "$smdebug" export "$trial" --format "$fmt" --out "$dir/t.$fmt"
      done
      for fmt in npz safetensors; do
        run_failing "$where" "$dir/s.$fmt" "$smdebug" export "$trial" --format "$fmt" --step 0 --out "$dir/s.$fmt"
      done
      run_failing "$where" - "$smdebug" export "$trial" --format tensorboard --out "$dir/tb"
      run_failing "$where" - "$quickstart" --out "$dir/qs"
      # What the quickstart did save is a trial the CLI reads (or refuses with one line), never a crash.
      if [[ -d "$dir/qs" ]]; then
        set +e; out="$("$smdebug" steps "$dir/qs" 2>&1)"; code=$?; set -e
        (( code <= 2 )) && ! grep -q "terminate called" <<<"$out" || fail "reading the quickstart's partial trial: exit $code: $out"
      fi
      run_failing "$where" - env TMPDIR="$dir" "$custom_rule"
    done
    # A rule whose stop-file action cannot be written still runs to its end and reports it.
    set +e
    out="$("$smdebug" rule VanishingGradient "$trial" --param threshold=0.0065 --action "stop-file:$ro/STOP" 2>&1)"; code=$?
    set -e
    [[ $code == 1 ]] || fail "rule with an unwritable stop-file: exit $code: $out"
    # One line per firing step (step 3: 1 finding; step 6: 3, listed on its line), the action once per firing step
    [[ "$(grep -c '^step ' <<<"$out")" == 2 && "$(grep -c '^step 6 .*and 2 more tensors' <<<"$out")" == 1 &&
       "$(grep -c '^smdebug rule: action failed: stop-file:' <<<"$out")" == 2 ]] ||
      fail "rule with an unwritable stop-file: expected 2 step lines (step 6 listing 3 tensors) and 2 failure lines: $out"
    # Standard output on a full device: every command and example that prints.
    for args in "summary $trial" "summary $trial --json" "tensors $trial" "steps $trial" "collections $trial" "workers $trial" \
                "value $trial $loss 0" "reductions $trial $loss" "shapes $trial $loss" "dump $trial --json" "verify $trial" \
                "watch $trial" "rules" "rule VanishingGradient $trial --param threshold=0.0065" "export $trial --format csv --out -" \
                "--help"; do
      # shellcheck disable=SC2086
      run_stdout_full "$smdebug" $args
    done
    run_stdout_full "$read_local" "$trial" "$loss"
    run_stdout_full "$watch" "$trial" "$loss" --timeout 60
    run_stdout_full "$quickstart" --out "$work/qs-ok"
    run_stdout_full "$custom_rule"
    echo "$checked failing runs checked"
    ;;
  *) echo "usage: examples.sh realtime|live|s3|fulldisk|unwritable ..." >&2; exit 2 ;;
esac
