#!/usr/bin/env bash
# Runs the conformance cases through S3Store against the s3rver instances started by
# tests/s3rver/run-with-s3rver.sh (HTTP, then HTTPS with certificate verification against the
# throw-away CA). Usage: conformance_s3.sh CONFORMANCE_RUNNER CASES_DIR
set -euo pipefail
runner="$1"; cases="$2"
export AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER AWS_REGION=us-east-1
unset AWS_PROFILE AWS_SESSION_TOKEN
export SMDEBUG_TRAINING_END_DELAY_REFRESH=0
echo "== conformance over S3 (HTTP) =="
AWS_ENDPOINT_URL="$SMDEBUG_S3RVER_ENDPOINT" "$runner" "$cases" --quiet --s3 "s3://smdebug-test/conformance-http"
if [[ -n "${SMDEBUG_S3RVER_HTTPS_ENDPOINT:-}" ]]; then
  echo "== conformance over S3 (HTTPS) =="
  AWS_ENDPOINT_URL="$SMDEBUG_S3RVER_HTTPS_ENDPOINT" AWS_CA_BUNDLE="$SMDEBUG_S3RVER_CA" \
    "$runner" "$cases" --quiet --s3 "s3://smdebug-test/conformance-https"
fi
