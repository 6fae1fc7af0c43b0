#!/usr/bin/env python3
"""The reference Python smdebug reading a trial the way bench_trials does, for the ratios in the
closing notes and README: open (create_trial + steps), then every value tensor-major.

    PYTHONPATH=/path/to/sagemaker-debugger python3 benchmarks/reference/read_every_value.py PATH_OR_S3_URL

The reference itself is not part of this repository (fetch awslabs/sagemaker-debugger and point
PYTHONPATH at it; Debian's python3-numpy, python3-pandas, python3-protobuf and python3-boto3 make it
importable).
For an s3:// URL on a local S3 server (tests/s3rver/run-with-s3rver.sh), AWS_ENDPOINT_URL names
the server: boto3 releases older than 1.28 ignore that variable, so this script passes it to
boto3.client itself (the reference's S3 code is unchanged).
"""
import os
import sys
import time


def route_boto3_to_endpoint():
    endpoint = os.environ.get("AWS_ENDPOINT_URL")
    if not endpoint:
        return
    import boto3

    plain_client = boto3.client

    def client(service, *args, **kwargs):
        if service == "s3":
            kwargs.setdefault("endpoint_url", endpoint)
        return plain_client(service, *args, **kwargs)

    boto3.client = client


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    path = sys.argv[1]
    os.environ.setdefault("SMDEBUG_TRAINING_END_DELAY_REFRESH", "0")
    route_boto3_to_endpoint()
    t0 = time.perf_counter()
    from smdebug.trials import create_trial

    t1 = time.perf_counter()
    trial = create_trial(path)
    steps = trial.steps()
    names = trial.tensor_names()
    t2 = time.perf_counter()
    values = 0
    nbytes = 0
    for name in names:
        tensor = trial.tensor(name)
        for step in tensor.steps():
            v = tensor.value(step)
            values += 1
            nbytes += v.nbytes
    t3 = time.perf_counter()
    print(f"reference smdebug: {path}")
    print(f"import {t1 - t0:.3f} s, open {t2 - t1:.3f} s ({len(steps)} steps, {len(names)} tensors)")
    print(f"every value tensor-major: {values} values, {nbytes / 1e6:.1f} MB in {t3 - t2:.3f} s "
          f"({nbytes / 1e9 / (t3 - t2):.4f} GB/s); whole {t3 - t0:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
