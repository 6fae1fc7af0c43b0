#!/usr/bin/env bash
# Runs the jobs of JOBFILE, at most JOBS at once, longest-listed first as they are listed:
#
#   scripts/run-jobs.sh JOBS JOBFILE LOGDIR
#
# JOBFILE: one job a line, "NAME<TAB>COMMAND" (COMMAND runs under bash -c). Each job's output goes
# to LOGDIR/NAME.log; a failing job's log is printed. Prints one line per job (status, wall time),
# then "N passed, M failed"; exits non-zero when a job failed. Used by the sanitizer and hardening
# scripts so that both cores are busy while single-threaded test programs and fuzz targets run.
set -uo pipefail
jobs=${1:?usage: run-jobs.sh JOBS JOBFILE LOGDIR}
jobfile=${2:?usage: run-jobs.sh JOBS JOBFILE LOGDIR}
logdir=${3:?usage: run-jobs.sh JOBS JOBFILE LOGDIR}
mkdir -p "$logdir"
rm -f "$logdir"/*.rc

start_job() {  # NAME COMMAND
  local name=$1 cmd=$2
  (
    t0=$(date +%s)
    bash -c "$cmd" >"$logdir/$name.log" 2>&1
    rc=$?
    echo "$rc $(( $(date +%s) - t0 ))" >"$logdir/$name.rc"
  ) &
}

names=()
running=0
while IFS=$'\t' read -r name cmd; do
  [ -n "$name" ] || continue
  while [ "$running" -ge "$jobs" ]; do
    wait -n
    running=$((running - 1))
  done
  names+=("$name")
  start_job "$name" "$cmd"
  running=$((running + 1))
done <"$jobfile"
wait

passed=0
failed=0
for name in "${names[@]}"; do
  read -r rc secs <"$logdir/$name.rc" 2>/dev/null || { rc=1; secs=?; }
  if [ "$rc" -eq 0 ]; then
    passed=$((passed + 1))
    printf '%-40s passed  %5s s  %s\n' "$name" "$secs" \
      "$(grep -E 'test cases|executions' "$logdir/$name.log" | tail -n 1)"
  else
    failed=$((failed + 1))
    printf '%-40s FAILED  %5s s (exit %s; log %s)\n' "$name" "$secs" "$rc" "$logdir/$name.log"
    echo "----- $name -----"
    tail -n 200 "$logdir/$name.log"
    echo "-----"
  fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
