#!/usr/bin/env python3
"""Overhead of smdebug_cpp.pytorch.Hook on a training loop (issue 54), side by side in one run.

    python bench_pytorch_hook.py [--reference CHECKOUT] [--steps 200] [--repeats 7] [--json FILE]

The loop: a 3-layer MLP of width 256 (256 -> 256 -> 256 -> 10), batch 32, CPU, one thread
(torch.set_num_threads(1)), SGD, cross-entropy, `--steps` steps. Variants, each timed over the
whole loop plus the hook's close() (the files are on disk when the clock stops):

The trials are written below $TMPDIR (tempfile): the same loop on tmpfs (TMPDIR=/dev/shm) separates
the hook's work from the file system's. Both wall time and the process's CPU time (all its threads, the background writer's included) are
reported: on a shared machine the CPU time is the steadier figure.

  bare            no hook
  ours/N          smdebug_cpp.pytorch.Hook saving weights, biases, gradients, losses every N steps
  reference/N     the reference smdebug.pytorch.Hook, same configuration (with --reference)

The variants run interleaved, `--repeats` rounds, and each reports its median; ratios are to the
bare loop's median. --reference is a checkout of awslabs/sagemaker-debugger: it is copied to a
temporary folder and its protobuf modules generated there (protoc); pyinstrument, which only its
profiler imports, is replaced by an inert module when it is not installed.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import types

import torch
import torch.nn as nn

INTERVALS = (1, 10, 100)
COLLECTIONS = ["weights", "biases", "gradients", "losses"]


class MLP(nn.Module):
    def __init__(self, width=256, classes=10):
        super().__init__()
        self.fc1 = nn.Linear(width, width)
        self.fc2 = nn.Linear(width, width)
        self.fc3 = nn.Linear(width, classes)

    def forward(self, x):
        return self.fc3(torch.relu(self.fc2(torch.relu(self.fc1(x)))))


def prepare_reference(checkout, work):
    ref = os.path.join(work, "ref")
    shutil.copytree(checkout, ref, ignore=shutil.ignore_patterns(".git", "__pycache__", "tests", "examples", "docs"))
    proto_dir = os.path.join(ref, "smdebug", "core", "tfevent", "proto")
    protos = [os.path.join("smdebug", "core", "tfevent", "proto", f) for f in sorted(os.listdir(proto_dir)) if f.endswith(".proto")]
    protoc = shutil.which("protoc")
    if protoc is None:
        sys.exit("bench_pytorch_hook: protoc is not installed (apt-get install protobuf-compiler)")
    subprocess.run([protoc, "--python_out=.", *protos], cwd=ref, check=True)
    try:
        import pyinstrument  # noqa: F401
    except ImportError:
        pyi = types.ModuleType("pyinstrument")
        renderers = types.ModuleType("pyinstrument.renderers")
        pyi.Profiler = renderers.JSONRenderer = object
        pyi.renderers = renderers
        sys.modules["pyinstrument"] = pyi
        sys.modules["pyinstrument.renderers"] = renderers
    sys.path.insert(0, ref)
    import smdebug.pytorch  # noqa: F401

    return smdebug.pytorch


def run(make_hook, steps, out_root, tag):
    torch.manual_seed(0)
    model = MLP()
    crit = nn.CrossEntropyLoss()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    xs = [torch.randn(32, 256) for _ in range(8)]
    ys = [torch.randint(0, 10, (32,)) for _ in range(8)]
    out_dir = os.path.join(out_root, f"{tag}-{time.monotonic_ns()}")
    hook = None
    c0 = time.process_time()
    t0 = time.perf_counter()
    if make_hook is not None:
        hook = make_hook(out_dir)
        hook.register_module(model)
        hook.register_loss(crit)
    for i in range(steps):
        opt.zero_grad()
        loss = crit(model(xs[i % 8]), ys[i % 8])
        loss.backward()
        opt.step()
    if hook is not None:
        hook.close()
    elapsed = time.perf_counter() - t0
    cpu = time.process_time() - c0
    # The trials stay until the end (main removes the work folder): on an ext4 file system without
    # a journal (this VM's), creating files within seconds of deleting others makes the inode
    # allocator skip every "recently deleted" inode, reading inode tables: deleting each run's
    # trial before the next run cost the hooks 3 ms a step of kernel time (perf), more than the
    # hook's own work.
    return elapsed, cpu


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reference", help="checkout of awslabs/sagemaker-debugger to measure its hook too")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--json", help="write the figures here")
    args = ap.parse_args()
    torch.set_num_threads(1)
    os.environ.pop("SMDEBUG_CONFIG_FILE_PATH", None)

    import smdebug_cpp.pytorch as ours

    work = tempfile.mkdtemp(prefix="bench-pytorch-hook-")
    try:
        variants = {"bare": None}
        for n in INTERVALS:
            variants[f"ours/{n}"] = (lambda n: lambda d: ours.Hook(out_dir=d, save_config=ours.SaveConfig(save_interval=n),
                                                                  include_collections=COLLECTIONS))(n)
        if args.reference:
            ref = prepare_reference(os.path.abspath(args.reference), work)
            for n in INTERVALS:
                variants[f"reference/{n}"] = (lambda n: lambda d: ref.Hook(out_dir=d, save_config=ref.SaveConfig(save_interval=n),
                                                                          include_collections=COLLECTIONS))(n)
        times = {k: [] for k in variants}
        cpus = {k: [] for k in variants}
        for name, make in variants.items():  # warm-up round (imports, allocator, page cache)
            run(make, 20, work, name.replace("/", "_"))
        for _ in range(args.repeats):
            for name, make in variants.items():
                wall, cpu = run(make, args.steps, work, name.replace("/", "_"))
                times[name].append(wall)
                cpus[name].append(cpu)
        bare = statistics.median(times["bare"])
        bare_cpu = statistics.median(cpus["bare"])
        result = {"steps": args.steps, "repeats": args.repeats, "bare_seconds": bare, "bare_cpu_seconds": bare_cpu,
                  "variants": {}}
        print(f"{'variant':<14} {'wall s':>8} {'ms/step':>8} {'x bare':>7} {'cpu s':>8} {'x bare':>7}")
        for name in variants:
            med, cmed = statistics.median(times[name]), statistics.median(cpus[name])
            result["variants"][name] = {"median_seconds": med, "ratio": med / bare, "median_cpu_seconds": cmed,
                                        "cpu_ratio": cmed / bare_cpu, "all_seconds": times[name]}
            print(f"{name:<14} {med:8.3f} {1000 * med / args.steps:8.3f} {med / bare:7.3f} {cmed:8.3f} {cmed / bare_cpu:7.3f}")
        if args.reference:
            for n in INTERVALS:
                for label, key, base in (("wall", "median_seconds", bare), ("cpu", "median_cpu_seconds", bare_cpu)):
                    ours_extra = result["variants"][f"ours/{n}"][key] - base
                    ref_extra = result["variants"][f"reference/{n}"][key] - base
                    share = ours_extra / ref_extra if ref_extra > 0 else float("nan")
                    print(f"every {n:>3} ({label}): our extra time is {share:.2f} of the reference hook's")
        if args.json:
            with open(args.json, "w") as f:
                json.dump(result, f, indent=1)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
