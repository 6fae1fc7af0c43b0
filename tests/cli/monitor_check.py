#!/usr/bin/python3
"""`smdebug monitor` following a job written step by step by this script (CTest cli.monitor).

    monitor_check.py SMDEBUG WORK_DIR

The job is written here, from docs/format.md (TFRecord records with masked CRC32C, Event and
TensorProto messages, index JSON, collections files, the end marker): two workers, TRAIN steps 0-5,
a scalar `loss` (worker_0 writes NaN at step 3) and a tensor whose name holds a quote, a backslash
and a newline (all zeros at step 4). The monitor is started (with --wait) before the trial exists and runs
ExplodingTensor and AllZero with a stop-file action and two --metric gauges. After each step the
script scrapes /metrics until the step shows, and parses the page with python3-prometheus-client's
Prometheus text parser and its OpenMetrics parser: last step, rule counters and last firing steps,
steps behind, the tensor gauges per worker (values computed here), label escaping. Then it writes
the end marker and checks that the monitor exits by itself, with code 1 (a rule fired) and one
line per firing. Further runs: --stop-on-fire (exit 1 at the first firing), a rule that never
fires (exit 0), usage errors (exit 2), a bad request, HEAD and 404.
"""
import http.client
import json
import math
import os
import queue
import shutil
import struct
import subprocess
import sys
import threading
import time

import numpy as np
from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse_openmetrics
from prometheus_client.parser import text_string_to_metric_families as parse_prometheus

SMDEBUG, WORK = sys.argv[1], sys.argv[2]
TRIAL = os.path.join(WORK, "trial")
STOP_FILE = os.path.join(WORK, "fired.json")
WORKERS = ["worker_0", "worker_1"]
WEIRD = 'layer "a"\\b\nc'  # a quote, a backslash and a newline: escaped in labels
STEPS = 6
NAN_STEP, ZERO_STEP = 3, 4
failures = []


def check(ok, message):
    if not ok:
        failures.append(message)
        print("FAIL:", message, file=sys.stderr)


# ---- a trial writer, from docs/format.md ------------------------------------------------------
def _crc32c_table():
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


CRC_TABLE = _crc32c_table()


def masked_crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = CRC_TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    c ^= 0xFFFFFFFF
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


assert masked_crc32c(b"0x12345678") == struct.unpack("<I", b"\xb3\xc0\x2d\x06")[0]


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field_bytes(number, payload):
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def field_varint(number, value):
    return varint(number << 3) + varint(value)


def record(payload):
    length = struct.pack("<Q", len(payload))
    return length + struct.pack("<I", masked_crc32c(length)) + payload + b"\xb3\xc0\x2d\x06"


def event(name, array, step, mode_step):
    shape = b"".join(field_bytes(2, field_varint(1, d)) for d in array.shape)
    tensor = field_varint(1, 1) + field_bytes(2, shape) + field_bytes(4, array.astype("<f4").tobytes())
    plugins = field_bytes(1, field_bytes(1, b"mode_step") + field_bytes(2, str(mode_step).encode())) + \
        field_bytes(1, field_bytes(1, b"mode") + field_bytes(2, b"1"))
    value = field_bytes(1, name.encode()) + field_bytes(8, tensor) + field_bytes(9, plugins)
    ev = b"\x09" + struct.pack("<d", time.time()) + (field_varint(2, step) if step else b"") + field_bytes(5, field_bytes(1, value))
    return record(ev)


def write_atomic(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".tmp", "wb") as f:
        f.write(data)
    os.rename(path + ".tmp", path)


def loss_value(worker, step):
    if worker == "worker_0" and step == NAN_STEP:
        return np.float32("nan")
    return np.float32((WORKERS.index(worker) + 1) / (step + 1))


def weird_value(worker, step):
    if step == ZERO_STEP:
        return np.zeros(4, dtype=np.float32)
    return np.array([-3.5, 1, 2, step], dtype=np.float32) * (WORKERS.index(worker) + 1)


def write_collections():
    for w in WORKERS:
        doc = {"collections": {"default": {"name": "default", "include_regex": [".*"], "tensor_names": ["loss", WEIRD],
                                           "reduction_config": {}, "save_config": {}, "save_histogram": True}},
               "_meta": {"num_workers": len(WORKERS)}}
        write_atomic(os.path.join(TRIAL, "collections", "000000000", f"{w}_collections.json"), json.dumps(doc).encode())


def write_step(step, worker):
    events = f"events/{step:012d}/{step:012d}_{worker}.tfevents"
    blob, payload = b"", []
    for name, value in (("loss", np.array(loss_value(worker, step))), (WEIRD, weird_value(worker, step))):
        rec = event(name, value, step, step)
        payload.append({"tensorname": name, "start_idx": len(blob), "length": len(rec)})
        blob += rec
    write_atomic(os.path.join(TRIAL, events), blob)
    index = {"meta": {"mode": "TRAIN", "mode_step": step, "event_file_name": events}, "tensor_payload": payload, "shape_payload": []}
    write_atomic(os.path.join(TRIAL, f"index/{step // 1000:09d}/{step:012d}_{worker}.json"), json.dumps(index).encode())


# ---- scraping ---------------------------------------------------------------------------------
def fetch(port, method="GET", path="/metrics", accept=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request(method, path, headers={"Accept": accept} if accept else {})
    r = conn.getresponse()
    body = r.read().decode()
    conn.close()
    return r.status, r.getheader("Content-Type", ""), body


def samples(families):
    out = {}
    for fam in families:
        for s in fam.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def last_steps(s):
    return {k: v for k, v in s.items() if k[0] == "smdebug_last_step"}


def scrape(port):
    """Both formats, parsed; returns the Prometheus samples (after checking the OpenMetrics ones agree).
    The two pages are fetched one after the other: when the monitor processed a step in between, again."""
    for _ in range(50):
        prom, om = scrape_both(port)
        if last_steps(prom) == last_steps(om):
            break
    check(set(om) == set(prom), f"samples in one format only: {set(om) ^ set(prom)}")
    for key, value in prom.items():
        if key[0] == "smdebug_steps_behind":
            continue  # may move between the two scrapes
        other = om.get(key)
        same = other is not None and (value == other or (math.isnan(value) and math.isnan(other)))
        check(same, f"{key}: Prometheus {value}, OpenMetrics {other}")
    return prom


def scrape_both(port):
    status, ctype, text = fetch(port)
    check(status == 200 and ctype.startswith("text/plain; version=0.0.4"), f"Prometheus scrape: {status} {ctype}")
    prom = samples(parse_prometheus(text))
    status, ctype, om_text = fetch(port, accept="application/openmetrics-text; version=1.0.0,text/plain;version=0.0.4;q=0.5")
    check(status == 200 and ctype.startswith("application/openmetrics-text; version=1.0.0"), f"OpenMetrics scrape: {status} {ctype}")
    check(om_text.endswith("# EOF\n"), "OpenMetrics page ends with # EOF")
    check("# EOF" not in text, "Prometheus page has no # EOF")
    om = samples(parse_openmetrics(om_text))
    return prom, om


def get(s, name, **labels):
    return s.get((name, tuple(sorted(labels.items()))))


def wait_for_step(port, step, deadline=60):
    end = time.time() + deadline
    while time.time() < end:
        s = scrape(port)
        if get(s, "smdebug_last_step", mode="TRAIN") == step:
            return s
        time.sleep(0.05)
    check(False, f"the monitor did not report step {step} within {deadline} s")
    return scrape(port)


def close(a, b):
    a, b = float(a), float(b)
    return (math.isnan(a) and math.isnan(b)) or a == b or abs(a - b) <= 1e-6 * abs(b)


# ---- the live run -----------------------------------------------------------------------------
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
cmd = [SMDEBUG, "monitor", TRIAL, "--wait", "120", "--rule", "ExplodingTensor:tensor_regex=^loss$", "--rule", "AllZero:tensor_regex=layer,threshold=100",
       "--metric", "^loss$", "--metric", "layer:abs_max", "--metrics-port", "0", "--poll", "0.05", "--action", "stop-file:" + STOP_FILE]
monitor = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
stderr_lines = queue.Queue()
threading.Thread(target=lambda: [stderr_lines.put(l) for l in monitor.stderr], daemon=True).start()
port = None
try:
    line = stderr_lines.get(timeout=60)
    prefix = "smdebug monitor: metrics at http://127.0.0.1:"
    check(line.startswith(prefix) and line.rstrip().endswith("/metrics"), f"first stderr line: {line!r}")
    port = int(line[len(prefix):].split("/")[0])
except queue.Empty:
    check(False, "no metrics URL on stderr")
if port is None:
    monitor.kill()
    print("\n".join(failures), file=sys.stderr)
    sys.exit(1)

# Before the trial exists: the metrics are served, nothing processed yet.
s = scrape(port)
check(get(s, "smdebug_rule_fired_total", rule="ExplodingTensor") == 0, "fired_total 0 before any step")
check(get(s, "smdebug_rule_last_fired_step", rule="ExplodingTensor") is None, "no last_fired_step before a firing")
check(get(s, "smdebug_training_ended") == 0, "training_ended 0 while waiting")
check(not any(k[0] == "smdebug_last_step" for k in s), "no smdebug_last_step before a step")

write_collections()
for step in range(STEPS):
    for w in WORKERS:
        write_step(step, w)
    s = wait_for_step(port, step)
    check(get(s, "smdebug_steps_behind") == 0, f"step {step}: steps_behind {get(s, 'smdebug_steps_behind')}")
    for w in WORKERS:
        v = get(s, "smdebug_tensor", tensor="loss", reduction="mean", worker=w)
        check(v is not None and close(v, loss_value(w, step)), f"step {step}: loss mean of {w} = {v}, want {loss_value(w, step)}")
        v = get(s, "smdebug_tensor", tensor=WEIRD, reduction="abs_max", worker=w)
        want = float(np.max(np.abs(weird_value(w, step))))
        check(v is not None and close(v, want), f"step {step}: abs_max of the escaped name for {w} = {v}, want {want}")
    fired_exploding = 1 if step >= NAN_STEP else 0
    fired_zero = 1 if step >= ZERO_STEP else 0
    check(get(s, "smdebug_rule_fired_total", rule="ExplodingTensor") == fired_exploding, f"step {step}: ExplodingTensor fired_total")
    check(get(s, "smdebug_rule_fired_total", rule="AllZero") == fired_zero, f"step {step}: AllZero fired_total")
    check(get(s, "smdebug_rule_last_fired_step", rule="ExplodingTensor") == (NAN_STEP if fired_exploding else None),
          f"step {step}: ExplodingTensor last_fired_step {get(s, 'smdebug_rule_last_fired_step', rule='ExplodingTensor')}")
    check(get(s, "smdebug_rule_last_fired_step", rule="AllZero") == (ZERO_STEP if fired_zero else None), f"step {step}: AllZero last_fired_step")
    check(get(s, "smdebug_training_ended") == 0, f"step {step}: training_ended 0 while the job runs")
    check(os.path.exists(STOP_FILE) == (step >= NAN_STEP), f"step {step}: the stop-file action ran exactly from the first firing")
    check(monitor.poll() is None, f"step {step}: the monitor is still running")
    if step in (NAN_STEP, ZERO_STEP):  # each firing rewrites the stop file with its finding
        with open(STOP_FILE) as f:
            finding = json.load(f)
        want = ("ExplodingTensor", NAN_STEP, "loss") if step == NAN_STEP else ("AllZero", ZERO_STEP, WEIRD)
        check((finding.get("rule"), finding.get("step"), finding.get("tensor")) == want and finding.get("mode") == "TRAIN",
              f"stop-file finding at step {step}: {finding}")

# HTTP details: HEAD has no body, another path is 404, a malformed request line is 400.
status, ctype, body = fetch(port, method="HEAD")
check(status == 200 and body == "", f"HEAD /metrics: {status}, body {body!r}")
status, _, _ = fetch(port, path="/other")
check(status == 404, f"GET /other: {status}")
status, _, _ = fetch(port, method="POST")
check(status == 405, f"POST /metrics: {status}")

started = time.time()
write_atomic(os.path.join(TRIAL, "training_job_end.ts"), b"")
try:
    out, _ = monitor.communicate(timeout=60)
except subprocess.TimeoutExpired:
    monitor.kill()
    out, _ = monitor.communicate()
    check(False, "the monitor did not exit within 60 s of the end marker")
check(monitor.returncode == 1, f"exit code {monitor.returncode}, want 1 (a rule fired)")
lines = out.splitlines()
# one line per rule and step, the mode step beside the global step (the trial's steps are TRAIN steps)
check(len(lines) == 2 and lines[0] == f"step {NAN_STEP} (TRAIN step {NAN_STEP}) ExplodingTensor tensor loss: nan at element 0" and
      lines[1].startswith(f"step {ZERO_STEP} (TRAIN step {ZERO_STEP}) AllZero tensor "), f"stdout: {lines}")
print(f"monitor exited {time.time() - started:.2f} s after the end marker")

# ---- runs over the ended trial ----------------------------------------------------------------
# Over the ended trial, the same lines, and at the end each rule's summary on stderr: what it
# checked, headed by its first firing.
r = subprocess.run([SMDEBUG, "monitor", TRIAL, "--rule", "ExplodingTensor:tensor_regex=^loss$", "--rule", "AllZero:tensor_regex=layer,threshold=100"],
                   capture_output=True, text=True, timeout=120)
err = r.stderr
check(r.returncode == 1 and r.stdout.splitlines() == lines, f"over the ended trial: {r.returncode} {r.stdout!r}")
summary = [l for l in err.splitlines() if not l.startswith("smdebug monitor: ")]
check(len(summary) == 2 and
      summary[0].startswith(f"ExplodingTensor: checked {STEPS} steps (0..{STEPS - 1}) of 1 tensor in ") and
      summary[0].endswith(f"; first fired at step {NAN_STEP} (TRAIN step {NAN_STEP}): tensor loss: nan at element 0; fired at 1 step") and
      summary[1].startswith(f"AllZero: checked {STEPS} steps (0..{STEPS - 1}) of 1 tensor in ") and
      f"; first fired at step {ZERO_STEP} (TRAIN step {ZERO_STEP}): " + lines[1].split(" AllZero ", 1)[1].split(" (and ")[0] in summary[1] and
      summary[1].endswith("; fired at 1 step"),
      f"stderr: {err!r}")
r = subprocess.run([SMDEBUG, "monitor", TRIAL, "--rule", "ExplodingTensor", "--rule", "AllZero:tensor_regex=layer", "--stop-on-fire"],
                   capture_output=True, text=True, timeout=120)
check(r.returncode == 1 and r.stdout.splitlines() == [l for l in lines[:1]], f"--stop-on-fire: {r.returncode} {r.stdout!r} {r.stderr!r}")
r = subprocess.run([SMDEBUG, "monitor", TRIAL, "--rule", "ExplodingTensor:tensor_regex=layer"], capture_output=True, text=True, timeout=120)
check(r.returncode == 0 and r.stdout == "", f"a rule that never fires: {r.returncode} {r.stdout!r} {r.stderr!r}")
r = subprocess.run([SMDEBUG, "monitor", TRIAL, "--rule", "ExplodingTensor", "--steps", "4:6"], capture_output=True, text=True, timeout=120)
check(r.returncode == 0 and r.stdout == "", f"--steps 4:6 skips the NaN: {r.returncode} {r.stdout!r} {r.stderr!r}")
for bad in (["--rule", "NoSuchRule"], ["--rule", "ExplodingTensor:only_nan=maybe"], ["--rule", "ExplodingTensor:nokey=1"],
            ["--rule", "ExplodingTensor", "--metrics-port", "70000"], ["--rule", "ExplodingTensor", "--metric", "x"],
            ["--rule", "ExplodingTensor", "--action", "nosuch:x"], ["--rule", "ExplodingTensor", "--poll", "0"],
            ["--rule", "ExplodingTensor", "--metrics-port", "0", "--metrics-bind", "not-an-address"], []):
    r = subprocess.run([SMDEBUG, "monitor", TRIAL] + bad, capture_output=True, text=True, timeout=60)
    check(r.returncode == 2 and r.stderr.startswith("smdebug monitor: ") and r.stdout == "", f"{bad}: {r.returncode} {r.stderr!r}")

if failures:
    print(f"{len(failures)} check(s) failed", file=sys.stderr)
    sys.exit(1)
print("cli.monitor: all checks passed")
