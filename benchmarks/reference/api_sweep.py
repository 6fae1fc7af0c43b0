#!/usr/bin/env python3
"""The analysis API called the same way through the Python smdebug and through smdebug_cpp, and
the answers compared: how docs/python.md ("Where the answers differ from smdebug") was checked.

    python3 benchmarks/reference/api_sweep.py --reference /path/to/sagemaker-debugger TRIAL [TRIAL ...]

For each trial, runs this script once per package in a child process (`--child PACKAGE TRIAL`),
each printing one JSON line per call: the call's label and either its answer (arrays as dtype,
shape and their first elements; floats rounded to 9 digits) or the exception's type. Then prints
each label whose answers differ, grouped by the kind of call, with one example. The Python
smdebug is not part of this repository: fetch awslabs/sagemaker-debugger and pass its checkout
(Debian's python3-numpy and python3-protobuf make it importable); smdebug_cpp is imported from the
running Python (a venv with the package installed). Differences that are deliberate are listed in
docs/deviations.md (D1-D23) and docs/python.md.
"""
import argparse
import collections
import importlib
import json
import math
import os
import re
import subprocess
import sys

REDUCTIONS = ("min", "max", "mean", "std", "variance", "sum", "prod", "l1", "l2", "median")


def plain(v):
    """A JSON-comparable form of an answer."""
    import numpy as np

    if isinstance(v, np.ndarray):
        return {"ndarray": str(v.dtype), "shape": list(v.shape), "first": [plain(x) for x in v.ravel().tolist()[:8]]}
    if isinstance(v, np.generic):
        return {"scalar": str(v.dtype), "value": plain(v.item())}
    if isinstance(v, float):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf") if math.isinf(v) else round(v, 9)
    if isinstance(v, dict):
        return {str(plain(k)): plain(x) for k, x in v.items()}  # in the dict's order
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, (set, frozenset)):
        return sorted(str(plain(x)) for x in v)
    if type(v).__name__ in ("ModeKeys", "StepState"):
        return f"{type(v).__name__}.{v.name}"
    if v is None or isinstance(v, (bool, int, str)):
        return v
    return type(v).__name__


def child(package, path):
    os.environ.setdefault("SMDEBUG_TRAINING_END_DELAY_REFRESH", "0")
    import numpy as np

    trial = importlib.import_module(package + ".trials").create_trial(path)
    modes = importlib.import_module(package + ".core.modes").ModeKeys

    def call(label, fn):
        try:
            out = {"call": label, "answer": plain(fn())}
        except Exception as e:  # the exception's type is the answer
            out = {"call": label, "raises": type(e).__name__}
        print(json.dumps(out, sort_keys=True), flush=True)

    call("steps()", lambda: trial.steps())
    call("steps(show_incomplete_steps=True)", lambda: trial.steps(show_incomplete_steps=True))
    for m in modes:
        call(f"steps(mode={m.name})", lambda: trial.steps(mode=m))
    call("workers()", lambda: trial.workers())
    call("tensor_names()", lambda: trial.tensor_names())
    call("tensor_names(regex=...)", lambda: trial.tensor_names(regex=["^.*"]))
    call("collections() order", lambda: list(trial.collections()))
    for name, c in list(trial.collections().items()):
        call(f"collection({name}).tensor_names", lambda: c.tensor_names)
        call(f"collection({name}).include_regex", lambda: c.include_regex)
        call(f"collection({name}).reduction_config", lambda: repr(c.reduction_config))
        call(f"tensor_names(collection={name})", lambda: trial.tensor_names(collection=name))
    call("tensor_names(regex, collection)", lambda: trial.tensor_names(regex="a", collection="default"))
    call("loaded_all_steps", lambda: trial.loaded_all_steps)
    call("last_complete_step", lambda: trial.last_complete_step)
    call("tensor(missing)", lambda: trial.tensor("no such tensor"))
    call("mode(missing step)", lambda: trial.mode(10**9))
    call("has_passed_step(far)", lambda: trial.has_passed_step(10**6))
    steps = trial.steps(show_incomplete_steps=True)
    for s in steps[:2] + steps[-2:]:
        call(f"mode({s})", lambda: trial.mode(s))
        call(f"mode_step({s})", lambda: trial.mode_step(s))
        call(f"has_passed_step({s})", lambda: trial.has_passed_step(s))
        call(f"tensor_names(step={s})", lambda: trial.tensor_names(step=s))
        for m in (modes.TRAIN, modes.EVAL):
            call(f"tensor_names(step={s}, mode={m.name})", lambda: trial.tensor_names(step=s, mode=m))
            call(f"global_step({m.name}, {s})", lambda: trial.global_step(m, s))
    for name in trial.tensor_names()[:12]:
        t = trial.tensor(name)
        call(f"T.steps() [{name}]", lambda: t.steps())
        call(f"T.steps(mode=TRAIN) [{name}]", lambda: t.steps(mode=modes.TRAIN))
        call(f"T.value(far) [{name}]", lambda: t.value(10**7))
        call(f"T.value(-1) [{name}]", lambda: t.value(-1))
        for s in t.steps()[:2] + t.steps()[-1:]:
            call(f"T.value({s}) [{name}]", lambda: t.value(s))
            call(f"T.value(np.int64({s})) [{name}]", lambda: t.value(np.int64(s)))
            call(f"T.shape({s}) [{name}]", lambda: t.shape(s))
            call(f"T.workers({s}) [{name}]", lambda: t.workers(s))
            call(f"T.reduction_values({s}) [{name}]", lambda: t.reduction_values(s))
            call(f"T.prev_steps({s}, 2) [{name}]", lambda: t.prev_steps(s, 2))
            call(f"T.value({s}, worker=missing) [{name}]", lambda: t.value(s, worker="nobody"))
            for r in REDUCTIONS:
                for absolute in (False, True):
                    call(f"T.reduction_value({s}, {r}, abs={absolute}) [{name}]",
                         lambda: t.reduction_value(s, r, abs=absolute))


def kind_of(label):
    """The call without its step numbers and tensor name: how differences are grouped."""
    return re.sub(r"\d+", "N", re.sub(r" \[.*\]$", "", label))


def compare(reference, path):
    runs = {}
    for package, extra in (("smdebug", reference), ("smdebug_cpp", None)):
        env = dict(os.environ)
        if extra:
            env["PYTHONPATH"] = extra
        python = "/usr/bin/python3" if extra else sys.executable  # the reference: the system's Python
        try:
            proc = subprocess.run([python, __file__, "--child", package, path], env=env, capture_output=True,
                                  text=True, timeout=600)
            out, failed = proc.stdout, proc.returncode != 0 and proc.stderr.strip().splitlines()[-1:]
        except subprocess.TimeoutExpired as e:  # a call that waits forever: keep what came before it
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            failed = ["timed out after 600 s"]
        answers = collections.OrderedDict()
        for line in out.splitlines():
            if line.startswith("{"):
                o = json.loads(line)
                answers[o["call"]] = o
        if failed:
            print(f"{package} stopped on {path}: {failed}")
        runs[package] = answers
    ref, ours = runs["smdebug"], runs["smdebug_cpp"]
    kinds = collections.Counter()
    example = {}
    for label, answer in ref.items():
        if label in ours and ours[label] != answer:
            kinds[kind_of(label)] += 1
            example.setdefault(kind_of(label), (label, answer, ours[label]))
    only = [label for label in ours if label not in ref]
    print(f"== {path}: {len(ref)} calls through smdebug, {len(ours)} through smdebug_cpp, "
          f"{sum(kinds.values())} answers differ")
    def said(o):
        return f"raises {o['raises']}" if "raises" in o else json.dumps(o["answer"])[:160]

    for kind, n in kinds.most_common():
        label, a, b = example[kind]
        print(f"{n:5} {kind}\n        e.g. {label}\n          smdebug:     {said(a)}\n          smdebug_cpp: {said(b)}")
    if only:
        print(f"      answered by smdebug_cpp only (smdebug stopped or hung first): {len(only)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trials", nargs="*")
    ap.add_argument("--reference", help="checkout of awslabs/sagemaker-debugger (importable)")
    ap.add_argument("--child", nargs=2, metavar=("PACKAGE", "TRIAL"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(*args.child)
        return
    if not args.reference or not args.trials:
        ap.error("give --reference and at least one trial")
    for path in args.trials:
        compare(args.reference, path)


if __name__ == "__main__":
    main()
