#!/usr/bin/env bash
# Compacts a copy of every conformance case with `smdebug compact` and runs the conformance runner
# on the copies: the answers read from the manifests must be the reference's. Fails when a
# compaction writes nothing for a finished trial, when the runner fails a query, or when a reader
# ignores a manifest (its warning on stderr). With `s3` the compacted copies are read through S3
# (under tests/s3rver/run-with-s3rver.sh), manifests included.
# Usage: compact_conformance.sh SMDEBUG CONFORMANCE_RUNNER CASES_DIR [s3]
set -euo pipefail
smdebug="$1"; runner="$2"; cases="$3"; where="${4:-local}"
[[ -d "$cases" ]] || { echo "compact_conformance.sh: no cases folder at $cases" >&2; exit 1; }
[[ -x "$smdebug" && -x "$runner" ]] || { echo "compact_conformance.sh: build smdebug_cli and conformance_runner" >&2; exit 1; }
export SMDEBUG_TRAINING_END_DELAY_REFRESH=0
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp -r "$cases" "$work/cases"
written=0
for trial in "$work"/cases/*/trial; do
  name="$(basename "$(dirname "$trial")")"
  before="$("$smdebug" steps "$trial" --all --requests 2>&1 >/dev/null | sed -n 's/.*GET \([0-9]*\),.*/\1/p')"
  out="$("$smdebug" compact "$trial")"
  echo "$name: $out"
  n="$(echo "$out" | sed -n 's/^wrote \([0-9]*\) manifest.*/\1/p')"
  written=$((written + n))
  if [[ -e "$trial/training_job_end.ts" && "$n" -eq 0 ]]; then
    echo "compact_conformance.sh: no manifest written for the finished trial $name" >&2; exit 1
  fi
  after="$("$smdebug" steps "$trial" --all --requests 2>&1 >/dev/null | sed -n 's/.*GET \([0-9]*\),.*/\1/p')"
  echo "$name: smdebug steps reads $before objects without manifests, $after with"
  if [[ "$n" -gt 0 && ! "$after" -lt "$before" ]]; then
    echo "compact_conformance.sh: the manifests of $name were not used" >&2; exit 1
  fi
done
[[ "$written" -gt 0 ]] || { echo "compact_conformance.sh: no manifest written" >&2; exit 1; }
args=("$work/cases" --quiet)
if [[ "$where" == s3 ]]; then
  : "${SMDEBUG_S3RVER_ENDPOINT:?run under tests/s3rver/run-with-s3rver.sh}"
  export AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER AWS_REGION=us-east-1 AWS_ENDPOINT_URL="$SMDEBUG_S3RVER_ENDPOINT"
  unset AWS_PROFILE AWS_SESSION_TOKEN
  args+=(--s3 "s3://smdebug-test/conformance-compacted-$$")
fi
status=0
"$runner" "${args[@]}" 2>"$work/stderr" || status=$?
cat "$work/stderr" >&2
if grep -q "warning: ignoring" "$work/stderr"; then
  echo "compact_conformance.sh: a reader ignored a manifest" >&2; exit 1
fi
exit "$status"
