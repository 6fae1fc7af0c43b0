#!/usr/bin/env python3
"""smdebug_cpp.dask.diff: one baseline against many runs, on distributed.LocalCluster of 1 and 2
worker processes (issue 53 item 3; docs/diagnose.md "Python and Dask").

    python3 benchmarks/python/bench_dask_diff.py BASELINE RUN_DIR [--workers 1,2]

RUN_DIR holds one trial per folder (e.g. 100 copies of runs written by
tests/analysis/make_analysis_trials.cpp). Prints, per cluster size, the wall time of sd.diff over
every run, runs per second, and how many runs differ from the baseline.
"""
import argparse
import os
import time

os.environ.setdefault("SMDEBUG_TRAINING_END_DELAY_REFRESH", "0")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("baseline")
    ap.add_argument("runs")
    ap.add_argument("--workers", default="1,2")
    args = ap.parse_args()
    from distributed import Client, LocalCluster

    import smdebug_cpp.dask as sd

    paths = sorted(os.path.join(args.runs, d) for d in os.listdir(args.runs))
    for n in (int(x) for x in args.workers.split(",")):
        with LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, Client(cluster):
            sd.diff(args.baseline, paths[:2])  # workers started and the package imported
            start = time.perf_counter()
            df = sd.diff(args.baseline, paths)
            secs = time.perf_counter() - start
        print(f"{n} worker(s): {len(paths)} runs in {secs:.2f} s = {len(paths) / secs:.1f} runs/s; "
              f"{int(df['step'].notna().sum())} differ")


if __name__ == "__main__":
    main()
