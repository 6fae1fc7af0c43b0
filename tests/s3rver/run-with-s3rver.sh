#!/usr/bin/env bash
# Runs a command with two s3rver instances on 127.0.0.1 (HTTP and HTTPS with a throw-away
# self-signed certificate), then stops them.
#
#   run-with-s3rver.sh install WORKDIR          install s3rver (npm ci) unless already installed
#   run-with-s3rver.sh run WORKDIR CMD [ARGS]   start both servers, run CMD, stop them; exit CMD's code
#   run-with-s3rver.sh stop WORKDIR             stop servers a killed `run` left behind (WORKDIR/pids)
#
# CMD sees SMDEBUG_S3RVER_ENDPOINT=http://127.0.0.1:PORT, SMDEBUG_S3RVER_HTTPS_ENDPOINT=
# https://127.0.0.1:PORT and SMDEBUG_S3RVER_CA=WORKDIR/cert.pem (also written to
# WORKDIR/endpoints.env). Bucket: smdebug-test. Server logs: WORKDIR/s3rver-{http,https}.log.
# The servers watch their stdin (a pipe held by this script), so they exit with it even if this
# script is killed.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mode="${1:-}"; workdir="${2:-}"
if [[ -z "$mode" || -z "$workdir" ]]; then
  echo "usage: $0 install|run|stop WORKDIR [CMD ARGS...]" >&2; exit 2
fi
shift 2
mkdir -p "$workdir"
workdir="$(cd "$workdir" && pwd)"

have_s3rver() {
  [[ -f "$here/node_modules/s3rver/package.json" || -f "$workdir/node_modules/s3rver/package.json" ]]
}

install() {
  command -v node >/dev/null || { echo "node not found" >&2; exit 1; }
  if have_s3rver; then return 0; fi
  command -v npm >/dev/null || { echo "npm not found" >&2; exit 1; }
  cp "$here/package.json" "$here/package-lock.json" "$workdir/"
  (cd "$workdir" && npm ci --no-audit --no-fund --loglevel=error)
}

stop_leftovers() {
  [[ -f "$workdir/pids" ]] || return 0
  local p
  while read -r p; do
    [[ "$p" =~ ^[0-9]+$ ]] || continue
    # Only a process that is still one of our launchers (a pid may have been reused).
    if tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q "launch-s3rver.js"; then kill -TERM "$p" 2>/dev/null || true; fi
  done <"$workdir/pids"
  rm -f "$workdir/pids"
}

case "$mode" in
  install) install; exit 0 ;;
  stop) stop_leftovers; exit 0 ;;
  run) ;;
  *) echo "unknown mode $mode" >&2; exit 2 ;;
esac
[[ $# -ge 1 ]] || { echo "run: no command" >&2; exit 2; }
install
stop_leftovers
export NODE_PATH="$workdir/node_modules${NODE_PATH:+:$NODE_PATH}"

if [[ ! -s "$workdir/cert.pem" || ! -s "$workdir/key.pem" ]]; then
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$workdir/key.pem" -out "$workdir/cert.pem" -days 2 \
    -subj "/CN=127.0.0.1" -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" 2>"$workdir/openssl.log"
fi

pids=()
cleanup() {
  exec 7>&- 8>&- 2>/dev/null || true
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -f "$workdir/http.stdin" "$workdir/https.stdin" "$workdir/pids"
}
trap cleanup EXIT

# start NAME FD [ENV...]: launches one server with its stdin on a FIFO held open by fd FD.
start() {
  local name="$1" fd="$2"; shift 2
  local fifo="$workdir/$name.stdin"
  rm -f "$fifo" "$workdir/$name.json"; mkfifo "$fifo"
  (cd "$here" && exec env S3RVER_WATCH_STDIN=1 S3RVER_BUCKETS=smdebug-test "$@" \
      node --openssl-legacy-provider launch-s3rver.js <"$fifo" >"$workdir/$name.json" 2>"$workdir/s3rver-$name.log") &
  pids+=($!)
  echo "$!" >>"$workdir/pids"
  eval "exec $fd>\"$fifo\""
}
wait_port() {
  local name="$1" i
  for ((i = 0; i < 300; i++)); do
    if [[ -s "$workdir/$name.json" ]]; then
      sed -n 's/.*"port":\([0-9][0-9]*\).*/\1/p' "$workdir/$name.json" | head -n1
      return 0
    fi
    sleep 0.1
  done
  echo "s3rver ($name) did not start; log:" >&2; cat "$workdir/s3rver-$name.log" >&2; return 1
}

start http 7
start https 8 S3RVER_KEY="$workdir/key.pem" S3RVER_CERT="$workdir/cert.pem"
http_port="$(wait_port http)"
https_port="$(wait_port https)"

export SMDEBUG_S3RVER_ENDPOINT="http://127.0.0.1:$http_port"
export SMDEBUG_S3RVER_HTTPS_ENDPOINT="https://127.0.0.1:$https_port"
export SMDEBUG_S3RVER_CA="$workdir/cert.pem"
{
  echo "SMDEBUG_S3RVER_ENDPOINT=$SMDEBUG_S3RVER_ENDPOINT"
  echo "SMDEBUG_S3RVER_HTTPS_ENDPOINT=$SMDEBUG_S3RVER_HTTPS_ENDPOINT"
  echo "SMDEBUG_S3RVER_CA=$SMDEBUG_S3RVER_CA"
} >"$workdir/endpoints.env"

rc=0
"$@" 7>&- 8>&- || rc=$?
exit "$rc"
