#!/usr/bin/env python3
"""export_check.py SMDEBUG TRIAL EXPECTED_JSON|- PROTO: runs `SMDEBUG export` on TRIAL in every format
and reads each output back with an independent reader, checking it against values computed here:

  csv, jsonl   pandas.read_csv / pandas.read_json(lines=True); every row against numpy reductions of
               the npz export of its step and worker, or (tensors saved only as reductions) against
               the reference Python smdebug's results in EXPECTED_JSON (- when there is none: a trial
               written by the C++ Hook); no row missing; the filters.
  npz          numpy.load, every array against the reference's tensor.value results.
  safetensors  parsed by the published format (u64 header length, JSON, data_offsets) into numpy
               arrays, compared with the npz; __metadata__.
  tensorboard  the proto PROTO compiled with protoc --python_out, the TFRecord framing and its
               masked CRC32C checked, runs, tags, steps, scalar values and histograms (computed
               here with numpy over TensorBoard's default buckets) compared.
  errors       exit codes 2 (usage, unwritable output) and 1 (a truncated event file).

Prints what is wrong and exits 1; exits 0 when everything matches. Every tool is required."""
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import urllib.parse

import numpy as np
import pandas as pd

SMDEBUG, TRIAL, EXPECTED, PROTO = sys.argv[1:5]
WORK = tempfile.mkdtemp(prefix="smdebug_export_check_")
problems = []
DEFAULT = ["min", "max", "mean", "l2"]


def check(ok, message):
    if not ok and len(problems) < 50:
        problems.append(message)
    return ok


def export(*args, expect=0):
    r = subprocess.run([SMDEBUG, "export", TRIAL, *args], capture_output=True)
    if r.returncode != expect:
        print(f"smdebug export {' '.join(args)}: exit {r.returncode}, expected {expect}\n{r.stderr.decode(errors='replace')}")
        sys.exit(1)
    return r


def out(name):
    return os.path.join(WORK, name)


def same(a, b, rtol=1e-6, atol=1e-9):
    a, b = float(a), float(b)
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= atol + rtol * abs(b)


def reduce(a, name, absolute):
    x = a.astype(np.float64).reshape(-1)
    if absolute:
        x = np.abs(x)
    with np.errstate(all="ignore"):
        return {"min": np.min, "max": np.max, "mean": np.mean, "std": np.std, "variance": np.var, "sum": np.sum,
                "prod": np.prod, "l1": lambda v: np.sum(np.abs(v)), "l2": lambda v: np.sqrt(np.sum(v * v))}[name](x)


def reducible(a):
    return a.size > 0 and a.dtype.kind in "biuf"


# ---- reference results (the Python smdebug's answers) ------------------------------------------
reference_values, reference_reductions = {}, {}
for block in json.load(open(EXPECTED))["blocks"] if EXPECTED != "-" else []:
    if block["name"] != "main":
        continue
    for q in block["queries"]:
        args, result = q["args"], q.get("result")
        if result is None or "mode" in args:
            continue
        if q["call"] == "tensor.value":
            reference_values[(args.get("worker"), args["step_num"], q["tensor"])] = result
        elif q["call"] == "tensor.reduction_value":
            name = ("abs_" if args["abs"] else "") + args["reduction_name"]
            reference_reductions[(args.get("worker"), args["step_num"], q["tensor"], name)] = result["data"][0]

# ---- csv and jsonl ---------------------------------------------------------------------------------
export("--format", "csv", "--out", out("all.csv"))
export("--format", "jsonl", "--out", out("all.jsonl"))
names = {"worker": str, "mode": str, "tensor": str, "reduction": str}
csv = pd.read_csv(out("all.csv"), dtype=names, float_precision="round_trip")
jsonl = pd.read_json(out("all.jsonl"), lines=True, dtype=names, convert_dates=False)
columns = ["worker", "mode", "step", "mode_step", "tensor", "reduction", "value"]
check(list(csv.columns) == columns, f"csv columns {list(csv.columns)}")
check(list(jsonl.columns) == columns, f"jsonl columns {list(jsonl.columns)}")
check(len(csv) == len(jsonl) and len(csv) > 0, f"csv has {len(csv)} rows, jsonl {len(jsonl)}")
check(set(csv["reduction"]) == set(DEFAULT), f"default reductions {sorted(set(csv['reduction']))}")
for (i, c), (_, j) in zip(csv.iterrows(), jsonl.iterrows()):
    same_row = all(c[k] == j[k] for k in ["worker", "mode", "mode_step", "tensor", "reduction"]) and \
        same(c["step"], j["step"]) and (same(c["value"], j["value"]) if math.isfinite(c["value"]) else math.isnan(j["value"]))
    if not check(same_row, f"csv row {i} {c.to_dict()} != jsonl {j.to_dict()}"):
        break

# every step of every worker as npz (the worker chosen, and the default one)
arrays = {}  # (worker, step) -> {tensor: array}
for (worker, step), _ in csv.dropna(subset=["step"]).groupby(["worker", "step"]):
    step = int(step)
    export("--format", "npz", "--step", str(step), "--worker", worker, "--out", out("s.npz"))
    with np.load(out("s.npz"), allow_pickle=False) as z:
        arrays[(worker, step)] = {k: z[k] for k in z.files}
check(len(arrays) > 0, "no npz exported")

verified = {"numpy": 0, "reference": 0, "unchecked": 0}
for i, row in csv.iterrows():
    a = arrays.get((row["worker"], int(row["step"])), {}).get(row["tensor"]) if not math.isnan(row["step"]) else None
    absolute = row["reduction"].startswith("abs_")
    if a is not None:
        want = reduce(a, row["reduction"].removeprefix("abs_"), absolute)
        check(same(row["value"], want, rtol=1e-5, atol=1e-6), f"csv row {i} {row.to_dict()}: numpy gives {want}")
        verified["numpy"] += 1
        continue
    # a tensor saved only as reductions at this step: the reference's answer, where it has one
    want = reference_reductions.get((row["worker"], int(row["step"]), row["tensor"], row["reduction"]))
    if want is None and row["worker"] == min(csv["worker"]):
        want = reference_reductions.get((None, int(row["step"]), row["tensor"], row["reduction"]))
    if want is None:
        verified["unchecked"] += 1
        continue
    check(same(row["value"], want, rtol=1e-6), f"csv row {i} {row.to_dict()}: reference {want}")
    verified["reference"] += 1
check(verified["unchecked"] == 0 or verified["reference"] > 0, "no stored reduction checked against the reference")
rows = {(r.worker, int(r.step), r.tensor, r.reduction) for r in csv.dropna(subset=["step"]).itertuples()}
for (worker, step), tensors in arrays.items():
    for name, a in tensors.items():
        if reducible(a):
            for red in DEFAULT:
                check((worker, step, name, red) in rows, f"no csv row for {worker} step {step} {name} {red}")

# the filters: --tensor, --steps, --mode, --worker, --reduction (repeated, comma-separated), --abs
candidates = sorted((w, s, n) for (w, s), ts in arrays.items() for n, a in ts.items() if reducible(a))
worker, first, pattern = candidates[len(candidates) // 2]
mode = csv[(csv["worker"] == worker) & (csv["step"] == first)]["mode"].iloc[0]
end, pattern = first + 5, pattern[:4]
export("--format", "csv", "--out", out("some.csv"), "--tensor", pattern, "--steps", f"{first}:{end}", "--mode", mode,
       "--worker", worker, "--reduction", "std,l1", "--reduction", "prod", "--abs")
some = pd.read_csv(out("some.csv"), dtype=names, float_precision="round_trip")
wanted = set()
for (w, s), tensors in arrays.items():
    modes = set(csv[(csv["worker"] == w) & (csv["step"] == s)]["mode"])
    if w == worker and first <= s < end and mode in modes:
        wanted |= {(w, s, n, "abs_" + r) for n, a in tensors.items() if pattern in n and reducible(a) for r in ["std", "l1", "prod"]}
got = {(r.worker, int(r.step), r.tensor, r.reduction) for r in some.itertuples()}
check(got >= wanted and len(wanted) > 0, f"filtered csv: missing {sorted(wanted - got)[:5]} (of {len(wanted)})")
for i, row in some.iterrows():
    check(pattern in row["tensor"] and first <= row["step"] < end and row["mode"] == mode and row["worker"] == worker,
          f"filtered csv row {i} {row.to_dict()} is outside the filters")
    a = arrays.get((row["worker"], int(row["step"])), {}).get(row["tensor"])
    if a is not None:
        want = reduce(a, row["reduction"].removeprefix("abs_"), True)
        check(same(row["value"], want, rtol=1e-5, atol=1e-6), f"filtered csv row {i} {row.to_dict()}: numpy gives {want}")
    else:
        want = reference_reductions.get((row["worker"], int(row["step"]), row["tensor"], row["reduction"]))
        check(want is not None and same(row["value"], want), f"filtered csv row {i} {row.to_dict()}: reference {want}")

# ---- npz against the reference; safetensors against the npz ----------------------------------------
compared = 0
for (w, step, name), ref in reference_values.items():
    if w is None:
        export("--format", "npz", "--step", str(step), "--tensor", "^" + name.replace(".", "\\.") + "$", "--out", out("d.npz"))
        with np.load(out("d.npz"), allow_pickle=False) as z:
            a = z[name] if name in z.files else None
    else:
        a = arrays.get((w, step), {}).get(name)
    if not check(a is not None, f"npz of step {step} worker {w} lacks {name}"):
        continue
    want = np.array([float("nan") if x is None else x for x in ref["data"]] if ref["dtype"] != "str" else ref["data"])
    if ref["dtype"] == "uint8" and a.dtype == np.int8:
        a = a.view(np.uint8)  # the Python smdebug reads int8 as uint8 (docs/deviations.md)
    ok = a.shape == tuple(ref["shape"]) and (ref["dtype"] == "str" or a.dtype.name == ref["dtype"])
    if ok and a.dtype.kind in "biuf":
        ok = np.array_equal(a.reshape(-1).astype(np.float64), want.reshape(-1).astype(np.float64), equal_nan=True)
    check(ok, f"npz {name} step {step} worker {w}: {a.dtype} {a.shape} {a.reshape(-1)[:4]} != reference {ref['dtype']} {ref['shape']} {ref['data'][:4]}")
    compared += 1
check(compared > 0 or EXPECTED == "-", "no npz array compared with the reference")

st_dtypes = {"F16": "<f2", "F32": "<f4", "F64": "<f8", "I8": "i1", "I16": "<i2", "I32": "<i4", "I64": "<i8", "U8": "u1",
             "U16": "<u2", "U32": "<u4", "U64": "<u8", "BOOL": "?"}
for (w, step), tensors in sorted(arrays.items())[:8]:
    r = export("--format", "safetensors", "--step", str(step), "--worker", w, "--out", out("s.safetensors"))
    blob = open(out("s.safetensors"), "rb").read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n].decode("utf-8"))
    data = blob[8 + n:]
    meta = header.pop("__metadata__")
    steps_of = csv[(csv["worker"] == w) & (csv["step"] == step)]
    check(meta.get("step") == str(step) and meta.get("worker") == w and meta.get("trial", "").rstrip("/") == TRIAL.rstrip("/"),
          f"safetensors metadata {meta}")
    if len(steps_of):
        check(meta.get("mode") == steps_of["mode"].iloc[0] and meta.get("mode_step") == str(int(steps_of["mode_step"].iloc[0])),
              f"safetensors metadata {meta} vs csv mode {steps_of['mode'].iloc[0]} {steps_of['mode_step'].iloc[0]}")
    spans = sorted(tuple(v["data_offsets"]) for v in header.values())
    check(all(a[1] == b[0] for a, b in zip(spans, spans[1:])) and (not spans or (spans[0][0] == 0 and spans[-1][1] == len(data))),
          f"safetensors step {step}: offsets {spans} do not tile {len(data)} bytes")
    expected_names = {k for k, a in tensors.items() if a.dtype.kind not in "SUc"}
    check(set(header) == expected_names, f"safetensors step {step} worker {w}: {sorted(header)} != {sorted(expected_names)}")
    for name, info in header.items():
        b, e = info["data_offsets"]
        a = np.frombuffer(data[b:e], dtype=st_dtypes[info["dtype"]]).reshape(info["shape"])
        want = tensors.get(name)
        check(want is not None and a.dtype == want.dtype and a.shape == want.shape and np.array_equal(a, want, equal_nan=a.dtype.kind == "f"),
              f"safetensors {name} step {step}: {a.dtype} {a.shape} differs from the npz")
    skipped = sorted(k for k, a in tensors.items() if a.dtype.kind in "SUc")
    for name in skipped:
        check(name.encode() in r.stderr, f"safetensors: no note on stderr for skipped {name}")

# ---- tensorboard --------------------------------------------------------------------------------
sys.path.insert(0, WORK)
subprocess.run(["protoc", "--python_out=" + WORK, "-I" + os.path.dirname(os.path.abspath(PROTO)), os.path.abspath(PROTO)], check=True)
import tensorboard_subset_pb2 as tb  # noqa: E402

CRC_TABLE = []
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    CRC_TABLE.append(c)


def masked_crc32c(data):
    c = 0xFFFFFFFF
    for byte in data:
        c = CRC_TABLE[(c ^ byte) & 0xFF] ^ (c >> 8)
    c ^= 0xFFFFFFFF
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def records(path):
    blob, at = open(path, "rb").read(), 0
    while at < len(blob):
        (length,) = struct.unpack("<Q", blob[at:at + 8])
        (length_crc,) = struct.unpack("<I", blob[at + 8:at + 12])
        payload = blob[at + 12:at + 12 + length]
        (payload_crc,) = struct.unpack("<I", blob[at + 12 + length:at + 16 + length])
        check(length_crc == masked_crc32c(blob[at:at + 8]) and payload_crc == masked_crc32c(payload), f"{path}: bad CRC at {at}")
        at += 16 + length
        yield payload


def tb_edges():
    pos, v = [], 1e-12
    while v < 1e20:
        pos.append(v)
        v *= 1.1
    return np.array([-x for x in reversed(pos)] + [0.0] + pos)


EDGES = tb_edges()


def histogram(a):
    x = a.astype(np.float64).reshape(-1)
    counts, _ = np.histogram(x, bins=EDGES)
    nz = np.nonzero(counts)[0]
    start, end = nz[0], nz[-1] + 1
    bucket = ([0.0] if start == 0 else []) + list(counts[max(start - 1, 0):end].astype(np.float64))
    return {"min": x.min(), "max": x.max(), "num": float(x.size), "sum": x.sum(), "sum_squares": (x * x).sum(),
            "bucket_limit": list(EDGES[start:end + 1]), "bucket": bucket}


floats = sorted({n for ts in arrays.values() for n, a in ts.items() if a.dtype.kind == "f" and a.size})
hist_pattern = next((p for p in ["kernel", "weight"] if any(p in n for n in floats)), floats[0])
tb_dir = out("tb")
export("--format", "tensorboard", "--out", tb_dir, "--histograms", hist_pattern)
runs = {}
for w in os.listdir(tb_dir):
    for m in os.listdir(os.path.join(tb_dir, w)):
        files = os.listdir(os.path.join(tb_dir, w, m))
        check(len(files) == 1 and files[0].startswith("events.out.tfevents."), f"run {w}/{m} holds {files}")
        runs[(urllib.parse.unquote(w), m)] = os.path.join(tb_dir, w, m, files[0])
check(set(runs) == set(zip(csv["worker"], csv["mode"])), f"runs {sorted(runs)} != workers x modes of the csv")
scalars, histograms = {}, {}
for (w, m), path in runs.items():
    for k, payload in enumerate(records(path)):
        event = tb.Event()
        event.ParseFromString(payload)
        if k == 0:
            check(event.WhichOneof("what") == "file_version" and event.file_version == "brain.Event:2", f"{path}: first record {event}")
            continue
        check(event.WhichOneof("what") == "summary" and len(event.summary.value) == 1, f"{path}: record {k} {event}")
        v = event.summary.value[0]
        kind = v.WhichOneof("value")
        if kind == "simple_value":
            check(v.metadata.plugin_data.plugin_name == "scalars", f"{path}: scalar {v.tag} plugin {v.metadata}")
            scalars[(w, m, event.step, v.tag)] = v.simple_value
        elif check(kind == "histo", f"{path}: value {v.tag} is {kind}"):
            check(v.metadata.plugin_data.plugin_name == "histograms", f"{path}: histogram {v.tag} plugin {v.metadata}")
            histograms[(w, event.step, v.tag)] = v.histo
want_scalars = {}
for r in csv.itertuples():
    step = int(r.step) if not math.isnan(r.step) else int(r.mode_step)
    want_scalars[(r.worker, r.mode, step, r.tensor + "/" + r.reduction)] = r.value
check(set(scalars) == set(want_scalars), f"scalars: {len(scalars)} tags/steps, csv {len(want_scalars)}; "
      f"extra {sorted(set(scalars) - set(want_scalars))[:3]} missing {sorted(set(want_scalars) - set(scalars))[:3]}")
for key, value in scalars.items():
    want = want_scalars.get(key)
    with np.errstate(over="ignore"):
        want = None if want is None else np.float32(want)
    check(want is not None and same(value, want, rtol=0, atol=0), f"scalar {key}: {value} != float32({want})")
want_histograms = 0
for (w, step), tensors in arrays.items():
    for name, a in tensors.items():
        if hist_pattern not in name or not reducible(a) or a.dtype.kind == "b":
            continue
        want_histograms += 1
        h, want = histograms.get((w, step, name)), histogram(a)
        if not check(h is not None, f"no histogram of {name} at step {step} of {w}"):
            continue
        for field in ["min", "max", "num", "sum", "sum_squares"]:
            check(same(getattr(h, field), want[field], rtol=1e-12, atol=0), f"histogram {name} step {step} {field}: {getattr(h, field)} != {want[field]}")
        check(list(h.bucket_limit) == want["bucket_limit"] and list(h.bucket) == want["bucket"],
              f"histogram {name} step {step}: buckets {list(h.bucket)[:5]}.. at {list(h.bucket_limit)[:3]}.. != {want['bucket'][:5]}.. at {want['bucket_limit'][:3]}..")
check(want_histograms > 0 and len(histograms) == want_histograms, f"{len(histograms)} histograms, expected {want_histograms}")

# ---- errors ---------------------------------------------------------------------------------------
def one_line(r, code, words):
    err = r.stderr.decode(errors="replace")
    check(err.startswith("smdebug export: ") and err.count("\n") == 1 and words in err, f"exit {code}: stderr {err!r} (want '{words}')")


one_line(export("--format", "xml", "--out", out("x"), expect=2), 2, "unknown --format 'xml'")
one_line(export("--format", "csv", expect=2), 2, "--out")
one_line(export("--format", "npz", "--out", out("x.npz"), expect=2), 2, "--step")
one_line(export("--format", "csv", "--out", out("no/such/folder/x.csv"), expect=2), 2, "cannot write")
one_line(export("--format", "tensorboard", "--out", tb_dir, expect=2), 2, "not empty")
one_line(export("--format", "npz", "--step", "999999", "--out", out("x.npz"), expect=2), 2, "999999")
check(not os.path.exists(out("x.npz")), "a failed npz export left its file")
broken = out("broken")
shutil.copytree(TRIAL, broken)
event_files = sorted(os.path.join(d, f) for d, _, fs in os.walk(os.path.join(broken, "events")) for f in fs)
with open(event_files[0], "r+b") as f:
    f.truncate(os.path.getsize(event_files[0]) // 2)
r = subprocess.run([SMDEBUG, "export", broken, "--format", "csv", "--out", out("broken.csv")], capture_output=True)
check(r.returncode == 1 and b"bad data" in r.stderr, f"truncated event file: exit {r.returncode}, stderr {r.stderr[:200]!r}")
check(len(pd.read_csv(out("broken.csv"))) > 0, "the rows of the intact files were not written")
broken_step = int(os.path.basename(os.path.dirname(event_files[0])))
r = subprocess.run([SMDEBUG, "export", broken, "--format", "csv", "--out", out("rest.csv"), "--steps", f"{broken_step + 1}:"], capture_output=True)
check(r.returncode == 0 and r.stderr.startswith(b"wrote ") and r.stderr.count(b"\n") == 1,  # only the summary line
      f"--steps past the truncated file read it: exit {r.returncode}, stderr {r.stderr[:200]!r}")

shutil.rmtree(WORK, ignore_errors=True)
print(f"export_check: {os.path.basename(TRIAL.rstrip('/'))}: {len(csv)} rows ({verified['numpy']} against numpy, "
      f"{verified['reference']} against the reference, {verified['unchecked']} stored reductions unchecked), {len(arrays)} npz, {compared} reference values, {len(runs)} runs, "
      f"{len(scalars)} scalars, {len(histograms)} histograms")
if problems:
    print("\n".join(problems))
    sys.exit(1)
