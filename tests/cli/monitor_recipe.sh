#!/usr/bin/env bash
# The recipe of docs/monitoring.md, end to end (CTest example.monitor_recipe): a webhook receiver,
# `smdebug monitor` started before the job with a rule, a webhook action and metrics, the quickstart
# training, the monitor's exit by itself once the job ended, the findings received by the webhook
# (the same steps as `smdebug rule` finds afterwards), and the TensorBoard export of the trial.
#   monitor_recipe.sh SMDEBUG QUICKSTART PYTHON WORK_DIR
set -euo pipefail
smdebug="$1"; quickstart="$2"; python="$3"; work="$4"
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$work"; mkdir -p "$work"
trial="$work/run"

# 1. Something to tell: a receiver appending every POSTed body to hooks.jsonl.
"$python" - "$work/hooks.jsonl" >"$work/receiver.port" <<'PY' &
import http.server, sys
out = sys.argv[1]
class Receiver(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        with open(out, "ab") as f:
            f.write(body + b"\n")
        self.send_response(204)
        self.end_headers()
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", 0), Receiver)
print(server.server_address[1], flush=True)
server.serve_forever()
PY
receiver=$!
trap 'kill "$receiver" 2>/dev/null || true' EXIT
for _ in $(seq 200); do [[ -s "$work/receiver.port" ]] && break; sleep 0.05; done
port="$(cat "$work/receiver.port")"
[[ -n "$port" ]] || fail "the webhook receiver did not start"

# 2. The monitor, before the job exists (--wait: a path that holds no trial fails at once otherwise).
"$smdebug" monitor "$trial" --wait 120 --rule VanishingGradient:threshold=0.01 --action "webhook:http://127.0.0.1:$port/hook" \
    --metrics-port 0 --metric 'CrossEntropyLoss:mean' >"$work/monitor.out" 2>"$work/monitor.err" &
monitor=$!

# 3. Train.
"$quickstart" --out "$trial" >"$work/quickstart.out" || { kill "$monitor" 2>/dev/null; fail "quickstart failed"; }
status=0
wait "$monitor" || status=$?
cat "$work/monitor.out"
[[ "$status" == 1 ]] || { cat "$work/monitor.err" >&2; fail "smdebug monitor exited $status, want 1 (VanishingGradient fired)"; }
grep -q '^smdebug monitor: metrics at http://127.0.0.1:[0-9]*/metrics$' "$work/monitor.err" || fail "no metrics URL on stderr"

# The same firings as `smdebug rule` finds on the finished trial, and one webhook POST for each.
"$smdebug" rule VanishingGradient "$trial" --param threshold=0.01 | sed -E 's/^(step [0-9]+( \([A-Z]+ step [0-9]+\))?) /\1 VanishingGradient /' >"$work/rule.out" || true
[[ -s "$work/rule.out" ]] || fail "smdebug rule found nothing to compare with"
diff "$work/rule.out" "$work/monitor.out" || fail "monitor and rule disagree"
"$python" - "$work/hooks.jsonl" "$work/monitor.out" <<'PY' || fail "webhook findings"
import json, sys
hooks = [json.loads(l) for l in open(sys.argv[1])]
lines = open(sys.argv[2]).read().splitlines()
steps = [int(l.split()[1]) for l in lines]  # one line per firing step, one webhook per firing step (its first finding)
firing = sorted(set(steps))
assert len(firing) == len(steps), steps
assert [h["step"] for h in hooks] == firing, (hooks, steps)
for h in hooks:
    l = lines[steps.index(h["step"])]
    assert h["rule"] == "VanishingGradient" and h["mode"] == "TRAIN" and h["trial"] == "run", h
    assert (" VanishingGradient " + h["message"]) in l and h["tensor"] in h["message"], (h, l)
print(f"{len(hooks)} findings received by the webhook")
PY

# 4. TensorBoard opens the export: one run per worker and mode.
"$smdebug" export "$trial" --format tensorboard --out "$work/tb" --histograms weight >/dev/null
ls "$work"/tb/worker_0/TRAIN/events.out.tfevents.* "$work"/tb/worker_0/EVAL/events.out.tfevents.* >/dev/null || fail "no TensorBoard runs"
echo "monitor recipe: ok"
