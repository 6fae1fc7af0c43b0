#!/usr/bin/env python3
"""smdebug_cpp.dask and the package against the Python smdebug (issue 24, sections 2 and 3).

    build/bin/bench_make_trial a /tmp/trial-a      # 1000 steps x 50 x 1024 float32
    build/bin/bench_make_trial w /tmp/trial-w      # 64 workers x 200 steps x 4 x 1024 float32
    python3 benchmarks/python/bench_dask.py /tmp/trial-a /tmp/trial-w [--reference /tmp/sagemaker-debugger] \
        [--smdebug build/bin/smdebug] [--only 2|3]

Section 2: reductions of every tensor of both trials, in one process (a plain loop over the
package's Trial, and the same graph as the cluster's on Dask's synchronous scheduler) and on a
distributed.LocalCluster of 1 and 2 worker processes, next to the Python smdebug's plain loop
computing the same rows with Tensor.reduction_value; rows/s and GB/s of tensor
payload reduced. Section 3, on trial (a), each figure from a fresh process: open (create_trial + steps()) and every
value() tensor-major through smdebug_cpp (as written and, with --smdebug, after `smdebug compact`)
against the Python smdebug, and the bytes Python allocates
per value() (tracemalloc; numpy registers its own data buffers with it, so a copy shows up) and
whether the arrays own their data. The Python smdebug runs in a child process with PYTHONPATH at
its checkout (made importable as benchmarks/reference/read_every_value.py describes).
"""
import argparse
import json
import os
import subprocess
import sys
import time

os.environ.setdefault("SMDEBUG_TRAINING_END_DELAY_REFRESH", "0")


def cpu_seconds():
    import resource

    r = resource.getrusage(resource.RUSAGE_SELF)  # every thread of the process
    return r.ru_utime + r.ru_stime


def loop_child(package, kind, path, reduction):
    """Runs in a child process: `package` (smdebug or smdebug_cpp) in a plain loop, one JSON line."""
    import importlib

    create_trial = importlib.import_module(package + ".trials").create_trial

    out = {}
    t0, c0 = time.perf_counter(), cpu_seconds()
    trial = create_trial(path)
    steps = trial.steps()
    out["open_s"], out["open_cpu_s"] = time.perf_counter() - t0, cpu_seconds() - c0
    t0, c0 = time.perf_counter(), cpu_seconds()
    if kind == "reductions":
        rows = 0
        for step in steps:
            for name in trial.tensor_names(step=step):
                tensor = trial.tensor(name)
                for worker in tensor.workers(step):
                    tensor.reduction_value(step, reduction, worker=worker)
                    rows += 1
        out["rows"] = rows
    else:
        values = nbytes = 0
        for name in trial.tensor_names():
            tensor = trial.tensor(name)
            for step in tensor.steps():
                nbytes += tensor.value(step).nbytes
                values += 1
        out["values"], out["bytes"] = values, nbytes
    out["work_s"], out["work_cpu_s"] = time.perf_counter() - t0, cpu_seconds() - c0
    print(json.dumps(out))


def run_loop(package, kind, path, reduction, checkout=None):
    env = dict(os.environ, PYTHONPATH=checkout) if checkout else None
    proc = subprocess.run([sys.executable, __file__, "--loop-child", package, kind, path, "--reduction", reduction],
                          env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{package} failed on {path}: {proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def row_bytes(path):
    import smdebug_cpp.trials as trials

    trial = trials.create_trial(path)
    step = trial.steps()[0]
    name = trial.tensor_names(step=step)[0]
    return trial.tensor(name).value(step).nbytes


def time_reductions(path, reduction, scheduler):
    import dask
    import smdebug_cpp.dask as sd

    t0 = time.perf_counter()
    df = sd.reductions(path, reduction)
    if scheduler == "sync":
        with dask.config.set(scheduler="sync"):
            rows = len(df.compute())
    else:
        rows = len(scheduler.compute(df).result())
    return rows, time.perf_counter() - t0


def section2(paths, reduction, checkout):
    from distributed import Client, LocalCluster

    print(f"== reductions ({reduction}) of every tensor")
    results = {}
    for path in paths:
        per_row = row_bytes(path)
        loop = run_loop("smdebug_cpp", "reductions", path, reduction)
        results[(path, "1 process")] = (loop["rows"], loop["open_s"] + loop["work_s"])
        results[(path, "1 proc, graph")] = time_reductions(path, reduction, "sync")
        for n in (1, 2):
            with LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
                    Client(cluster) as client:
                time_reductions(path, reduction, client)  # warm: workers import the package, page cache
                results[(path, f"LocalCluster {n}")] = time_reductions(path, reduction, client)
        if checkout:
            ref = run_loop("smdebug", "reductions", path, reduction, checkout)
            results[(path, "Python smdebug")] = (ref["rows"], ref["open_s"] + ref["work_s"])
        single = results[(path, "1 process")][1]
        for (p, how), (rows, wall) in results.items():
            if p != path:
                continue
            print(f"{path}: {how:15s} {rows} rows in {wall:8.3f} s: {rows / wall:10.0f} rows/s, "
                  f"{rows * per_row / wall / 1e9:.3f} GB/s, {single / wall:6.2f}x the single process")


def best_of(runs, key):
    return min(r[key] for r in runs)


def section3(path, checkout, smdebug_cli, repeats):
    """Each figure from a fresh process (a first open pays its page faults, as a user's does), best of
    `repeats`; wall and CPU seconds (CPU: every thread of the process)."""
    import shutil
    import tempfile
    import tracemalloc

    import smdebug_cpp.trials as trials

    print(f"== package against the Python smdebug on {path} (fresh process per run, best of {repeats})")
    variants = [("as written", path)]
    scratch = None
    if smdebug_cli:
        scratch = tempfile.mkdtemp(prefix="bench-compacted-")
        compacted = os.path.join(scratch, "trial")
        shutil.copytree(path, compacted)
        subprocess.run([smdebug_cli, "compact", compacted], check=True, capture_output=True)
        variants += [("compacted (manifest)", compacted)]
    ref = None
    if checkout:
        runs = [run_loop("smdebug", "values", path, "mean", checkout) for _ in range(max(1, repeats - 1))]
        ref = {k: best_of(runs, k) for k in ("open_s", "open_cpu_s", "work_s", "work_cpu_s")}
        ref["values"], ref["bytes"] = runs[0]["values"], runs[0]["bytes"]
        print(f"Python smdebug: open {ref['open_s'] * 1e3:.1f} ms (cpu {ref['open_cpu_s'] * 1e3:.1f} ms); every value() "
              f"{ref['values']} values in {ref['work_s']:.3f} s (cpu {ref['work_cpu_s']:.3f} s, "
              f"{ref['work_s'] / ref['values'] * 1e6:.1f} us/value)")
    for label, folder in variants:
        runs = [run_loop("smdebug_cpp", "values", folder, "mean") for _ in range(repeats)]
        open_s, open_cpu = best_of(runs, "open_s"), best_of(runs, "open_cpu_s")
        work_s, work_cpu = best_of(runs, "work_s"), best_of(runs, "work_cpu_s")
        values = runs[0]["values"]
        line = (f"smdebug_cpp, {label}: open {open_s * 1e3:.1f} ms (cpu {open_cpu * 1e3:.1f} ms); every value() "
                f"{work_s:.3f} s (cpu {work_cpu:.3f} s, {work_s / values * 1e6:.1f} us/value, "
                f"{runs[0]['bytes'] / 1e9 / work_s:.3f} GB/s)")
        if ref:
            line += (f"; ratios: open {ref['open_s'] / open_s:.0f}x (target >=100x), every value() "
                     f"{ref['work_s'] / work_s:.1f}x (target >=30x)")
        print(line)
    if scratch:
        shutil.rmtree(scratch, ignore_errors=True)

    trial = trials.create_trial(path)
    tensor = trial.tensor(trial.tensor_names()[0])
    steps = tensor.steps()
    tensor.value(steps[0])  # the first array made imports numpy's submodules: not a value's allocation
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    kept = [tensor.value(s) for s in steps]
    allocated = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    owns = sum(1 for v in kept if v.flags.owndata)
    print(f"value() kept for {len(kept)} steps: {allocated / len(kept):.0f} bytes allocated per value "
          f"(payload {kept[0].nbytes} bytes), {owns} arrays own their data, base {type(kept[0].base).__name__}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trial_a", nargs="?")
    ap.add_argument("trial_w", nargs="?")
    ap.add_argument("--reference", help="checkout of awslabs/sagemaker-debugger (importable)")
    ap.add_argument("--reduction", default="mean")
    ap.add_argument("--smdebug", help="the smdebug CLI: section 3 also measures the trial after `smdebug compact`")
    ap.add_argument("--repeats", type=int, default=3, help="section 3: fresh processes per figure (best taken)")
    ap.add_argument("--loop-child", nargs=3, metavar=("PACKAGE", "KIND", "PATH"), help=argparse.SUPPRESS)
    ap.add_argument("--only", choices=["2", "3"], help="run one section")
    args = ap.parse_args()
    if args.loop_child:
        loop_child(*args.loop_child, args.reduction)
        return 0
    if not args.trial_a or not args.trial_w:
        ap.error("give the folders of trials (a) and (w) (build/bin/bench_make_trial a|w DIR)")
    if args.only != "3":
        section2([args.trial_a, args.trial_w], args.reduction, args.reference)
    if args.only != "2":
        section3(args.trial_a, args.reference, args.smdebug, args.repeats)
    return 0


if __name__ == "__main__":
    sys.exit(main())
