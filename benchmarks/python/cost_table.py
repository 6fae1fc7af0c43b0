#!/usr/bin/env python3
"""What a question about a trial on S3 costs: requests, bytes and time on s3rver (issue 25 §5).

    build/bin/bench_make_trial x /tmp/trial-x          # 64 workers x 1000 steps x 4 x 64 float32
    tests/s3rver/run-with-s3rver.sh run /tmp/s3w /usr/bin/python3 benchmarks/python/cost_table.py \\
        /tmp/trial-x --smdebug build/bin/smdebug [--reference /tmp/sagemaker-debugger] [--python-every-value]

Uploads the trial to s3rver, then asks the smdebug CLI each question with --requests:

    open                     smdebug steps URL
    latest step              smdebug summary URL --latest
    one tensor, one step     smdebug value URL TENSOR STEP
    one tensor, every step   smdebug reductions URL TENSOR --worker W
    every value              smdebug verify URL

as written (no manifest), through a disk cache (cold, then warm), and, when the CLI has
`smdebug compact`, after compacting the trial (manifest). With --reference, the Python smdebug
(a checkout made importable as benchmarks/reference/read_every_value.py describes) answers the same
questions and its boto3 requests are counted (in its worker processes too). "every value" of the
Python smdebug is one GET per value: pass --python-every-value to measure it (slow on big trials).
Prints a markdown table with the S3 list price of each row (us-east-1 Standard: LIST $0.005 and
GET/HEAD $0.0004 per 1,000 requests).
"""
import argparse
import json
import multiprocessing
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

LIST_PRICE = 0.005 / 1000
GET_PRICE = 0.0004 / 1000
BUCKET = "smdebug-test"


def s3_env():
    endpoint = os.environ.get("SMDEBUG_S3RVER_ENDPOINT")
    if not endpoint:
        sys.exit("cost_table.py: SMDEBUG_S3RVER_ENDPOINT is not set (run under tests/s3rver/run-with-s3rver.sh)")
    env = dict(os.environ)
    env.update(AWS_ENDPOINT_URL=endpoint, AWS_ACCESS_KEY_ID="S3RVER", AWS_SECRET_ACCESS_KEY="S3RVER",
               AWS_REGION="us-east-1", AWS_DEFAULT_REGION="us-east-1", SMDEBUG_TRAINING_END_DELAY_REFRESH="0",
               SMDEBUG_S3_READ_TIMEOUT=os.environ.get("SMDEBUG_S3_READ_TIMEOUT", "120"))
    return env


def upload(folder, prefix, env):
    import boto3

    client = boto3.client("s3", endpoint_url=env["AWS_ENDPOINT_URL"], aws_access_key_id="S3RVER",
                          aws_secret_access_key="S3RVER", region_name="us-east-1")
    files = []
    for root, _, names in os.walk(folder):
        for n in names:
            full = os.path.join(root, n)
            files.append((full, prefix + "/" + os.path.relpath(full, folder)))
    t0 = time.perf_counter()

    def put(item):
        with open(item[0], "rb") as f:
            client.put_object(Bucket=BUCKET, Key=item[1], Body=f.read())

    with ThreadPoolExecutor(16) as pool:
        list(pool.map(put, files))
    print(f"uploaded {len(files)} objects to s3://{BUCKET}/{prefix} in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    return len(files)


COUNT_LINE = re.compile(r"requests: LIST (\d+), GET (\d+), HEAD (\d+); bytes (\d+)")


def run_cli(smdebug, args, env):
    t0 = time.perf_counter()
    p = subprocess.run([smdebug, *args, "--requests"], env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - t0
    m = COUNT_LINE.search(p.stderr)
    if p.returncode != 0 or not m:
        raise RuntimeError(f"smdebug {' '.join(args)} failed ({p.returncode}): {p.stderr.strip()[-400:]}")
    lst, get, head, nbytes = map(int, m.groups())
    return dict(list=lst, get=get, head=head, bytes=nbytes, seconds=elapsed, out=p.stdout)


# ---- the Python smdebug, counted ----------------------------------------------------------------

def python_child(reference, question, url, tensor, step, worker, queue):
    """In a child process: the Python smdebug answers `question`; its boto3 requests are counted by
    event hooks in every process it forks (shared counters)."""
    sys.path.insert(0, reference)
    import boto3

    counters = {k: multiprocessing.Value("q", 0) for k in ("list", "get", "head", "bytes")}
    kinds = {"ListObjectsV2": "list", "ListObjects": "list", "GetObject": "get", "HeadObject": "head"}
    plain_client = boto3.client

    def on_after(http_response=None, parsed=None, model=None, **_):
        kind = kinds.get(getattr(model, "name", ""))
        if kind:
            with counters[kind].get_lock():
                counters[kind].value += 1
        # A GetObject body is a stream the caller has yet to read: count its Content-Length
        # (reading http_response.content here would consume it and leave the caller 0 bytes).
        if getattr(model, "has_streaming_output", False):
            n = int((parsed or {}).get("ContentLength") or 0)
        else:
            n = len(http_response.content or b"") if http_response is not None else 0
        with counters["bytes"].get_lock():
            counters["bytes"].value += n

    def client(service, *args, **kwargs):
        if service == "s3":
            kwargs.setdefault("endpoint_url", os.environ["AWS_ENDPOINT_URL"])
        c = plain_client(service, *args, **kwargs)
        c.meta.events.register("after-call.s3", on_after)
        return c

    boto3.client = client
    from smdebug.trials import create_trial

    t0 = time.perf_counter()
    trial = create_trial(url)
    steps = trial.steps()
    answer = None
    if question == "open":
        answer = len(steps)
    elif question == "latest":
        answer = steps[-1]
    elif question == "one value":
        answer = float(trial.tensor(tensor).value(step, worker=worker).sum())
    elif question == "one tensor":
        t = trial.tensor(tensor)
        answer = len([t.value(s, worker=worker) for s in t.steps()])
    elif question == "every value":
        n = 0
        for name in trial.tensor_names():
            t = trial.tensor(name)
            for s in t.steps():
                for w in t.workers(s):
                    t.value(s, worker=w)
                    n += 1
        answer = n
    queue.put(dict(list=counters["list"].value, get=counters["get"].value, head=counters["head"].value,
                   bytes=counters["bytes"].value, seconds=time.perf_counter() - t0, answer=answer))


def run_python(reference, question, url, tensor, step, worker, env):
    os.environ.update(env)
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    p = ctx.Process(target=python_child, args=(reference, question, url, tensor, step, worker, queue))
    p.start()
    result = queue.get()
    p.join()
    return result


# ---- the table ----------------------------------------------------------------------------------

def price(row):
    return row["list"] * LIST_PRICE + (row["get"] + row["head"]) * GET_PRICE


def fmt_row(question, config, r):
    return (f"| {question} | {config} | {r['list']:,} | {r['get']:,} | {r['head']:,} | {r['bytes'] / 1e6:,.2f} MB "
            f"| {r['seconds']:.2f} s | ${price(r):.6f} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trial")
    ap.add_argument("--smdebug", required=True)
    ap.add_argument("--reference")
    ap.add_argument("--tensor", default="layer0/weight")
    ap.add_argument("--python-every-value", action="store_true")
    ap.add_argument("--json", help="also write the rows as JSON to this file")
    ap.add_argument("--uploaded", metavar="PREFIX", help="the trial is already on s3rver under this prefix (no upload)")
    ap.add_argument("--readers", default="written,cache,manifest",
                    help="comma-separated: written (as written), cache (cold then warm), manifest (after compact)")
    a = ap.parse_args()
    env = s3_env()
    name = os.path.basename(os.path.normpath(a.trial))
    prefix = a.uploaded or f"cost/{name}-{os.getpid()}"
    objects = sum(len(f) for _, _, f in os.walk(a.trial)) if a.uploaded else upload(a.trial, prefix, env)
    readers = set(a.readers.split(","))
    url = f"s3://{BUCKET}/{prefix}"
    smdebug = os.path.abspath(a.smdebug)

    last_step = json.loads(run_cli(smdebug, ["summary", url, "--latest", "--json"], env)["out"])["last_step"]
    step = last_step // 2
    worker = "worker_0"
    questions = [
        ("open", ["steps", url]),
        ("latest step", ["summary", url, "--latest"]),
        ("one tensor, one step", ["value", url, a.tensor, str(step), "--worker", worker]),
        ("one tensor, every step", ["reductions", url, a.tensor, "--worker", worker]),
        ("every value", ["verify", url]),
    ]
    rows = []
    cache = tempfile.mkdtemp(prefix="smdebug-cost-cache-")
    try:
        for q, args in questions:
            if "written" in readers:
                rows.append((q, "as written", run_cli(smdebug, args, env)))
            if "cache" in readers:
                rows.append((q, "disk cache, cold", run_cli(smdebug, args + ["--cache", cache], env)))
                rows.append((q, "disk cache, warm", run_cli(smdebug, args + ["--cache", cache], env)))
                shutil.rmtree(cache)
                os.mkdir(cache)
        has_compact = subprocess.run([smdebug, "compact", "--help"], env=env, capture_output=True).returncode == 0
        if has_compact and "manifest" in readers:
            c = run_cli(smdebug, ["compact", url], env)
            rows.append(("compact (once)", "writes the manifest", c))
            for q, args in questions:
                rows.append((q, "manifest", run_cli(smdebug, args, env)))
        if a.reference:
            pq = {"open": "open", "latest step": "latest", "one tensor, one step": "one value",
                  "one tensor, every step": "one tensor", "every value": "every value"}
            for q, _ in questions:
                if q == "every value" and not a.python_every_value:
                    continue
                rows.append((q, "Python smdebug", run_python(a.reference, pq[q], url, a.tensor, step, worker, env)))
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    print(f"\n{name}: {objects:,} objects on s3rver (HTTP, 127.0.0.1); tensor {a.tensor}, step {step}, {worker}\n")
    print("| question | reader | LIST | GET | HEAD | bytes | time | S3 price |")
    print("|---|---|---|---|---|---|---|---|")
    for q, config, r in rows:
        print(fmt_row(q, config, r))
    if a.json:
        with open(a.json, "w") as f:
            json.dump([dict(question=q, reader=c, **{k: v for k, v in r.items() if k != "out"}) for q, c, r in rows], f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
