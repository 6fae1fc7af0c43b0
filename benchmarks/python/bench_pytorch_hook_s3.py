#!/usr/bin/env python3
"""The PyTorch hook writing to S3 at a given request latency, against the same loop writing to a
local folder (issue 54: within 1.3x at 30 ms).

    tests/s3rver/run-with-s3rver.sh run /tmp/s3rver-bench \\
        python bench_pytorch_hook_s3.py [--latency-ms 30] [--steps 200] [--repeats 5] [--every 1]

The loop is bench_pytorch_hook.py's (a 3-layer MLP, one torch thread, weights, biases, gradients
and losses saved every `--every` steps). The S3 endpoint is the s3rver of run-with-s3rver.sh behind
a proxy (a process of its own) that delays every byte going to the server by `--latency-ms` (a link with
that one-way delay: each request then waits at least that long, whatever the number in flight).
Each variant is timed through the hook's close(), when every upload has been acknowledged.
Variants: bare (no hook), local (a folder below $TMPDIR), s3 (s3://smdebug-test/... through the
proxy); interleaved, medians.
"""
import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import uuid

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_pytorch_hook import COLLECTIONS, run  # noqa: E402

BUCKET = "smdebug-test"


class DelayProxy:
    """A TCP proxy on 127.0.0.1 whose client-to-server direction delays every chunk by `delay`
    seconds, in order (a constant one-way latency, not a pause per chunk)."""

    def __init__(self, upstream_host, upstream_port, delay):
        self.upstream = (upstream_host, upstream_port)
        self.delay = delay
        self.loop = asyncio.new_event_loop()
        self.port = None
        ready = threading.Event()
        self.thread = threading.Thread(target=self._serve, args=(ready,), daemon=True)
        self.thread.start()
        ready.wait()

    def _serve(self, ready):
        asyncio.set_event_loop(self.loop)

        async def start():
            server = await asyncio.start_server(self._connection, "127.0.0.1", 0)
            self.port = server.sockets[0].getsockname()[1]
            ready.set()

        self.loop.run_until_complete(start())
        self.loop.run_forever()

    async def _connection(self, client_reader, client_writer):
        server_reader, server_writer = await asyncio.open_connection(*self.upstream)
        queue = asyncio.Queue()

        async def receive():  # client -> queue, stamped with when each chunk may leave
            while data := await client_reader.read(1 << 16):
                await queue.put((time.monotonic() + self.delay, data))
            await queue.put((time.monotonic() + self.delay, b""))

        async def send():  # queue -> server, each chunk at its time
            while True:
                due, data = await queue.get()
                wait = due - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                if not data:
                    server_writer.write_eof() if server_writer.can_write_eof() else None
                    return
                server_writer.write(data)
                await server_writer.drain()

        async def back():  # server -> client, undelayed
            while data := await server_reader.read(1 << 16):
                client_writer.write(data)
                await client_writer.drain()
            client_writer.close()

        try:
            await asyncio.gather(receive(), send(), back())
        except (ConnectionError, OSError):
            pass
        finally:
            client_writer.close()
            server_writer.close()


def serve_proxy(host, port, delay):
    """--serve-proxy: the proxy alone, in a process of its own (in the benchmark's process it would
    take the GIL from the training loop); prints its port, serves until stdin closes."""
    proxy = DelayProxy(host, int(port), float(delay))
    print(proxy.port, flush=True)
    sys.stdin.read()


def start_proxy_process(host, port, delay):
    p = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--serve-proxy", host, str(port), str(delay)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    return p, int(p.stdout.readline())


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--serve-proxy":
        return serve_proxy(*sys.argv[2:])
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--latency-ms", type=float, default=30.0)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--every", type=int, default=1, help="save every N steps")
    args = ap.parse_args()
    endpoint = os.environ.get("SMDEBUG_S3RVER_ENDPOINT")
    if not endpoint:
        sys.exit("bench_pytorch_hook_s3: run under tests/s3rver/run-with-s3rver.sh (SMDEBUG_S3RVER_ENDPOINT)")
    torch.set_num_threads(1)
    up = urllib.parse.urlsplit(endpoint)
    proxy, proxy_port = start_proxy_process(up.hostname, up.port, args.latency_ms / 1000.0)
    os.environ.update({"AWS_ACCESS_KEY_ID": "S3RVER", "AWS_SECRET_ACCESS_KEY": "S3RVER", "AWS_REGION": "us-east-1",
                       "AWS_ENDPOINT_URL": f"http://127.0.0.1:{proxy_port}"})
    os.environ.pop("SMDEBUG_CONFIG_FILE_PATH", None)
    import smdebug_cpp.pytorch as ours

    def make(d):
        return ours.Hook(out_dir=d, save_config=ours.SaveConfig(save_interval=args.every), include_collections=COLLECTIONS)

    work = tempfile.mkdtemp(prefix="bench-pytorch-hook-s3-")
    variants = {
        "bare": (None, lambda tag: work),
        "local": (make, lambda tag: work),
        "s3": (make, lambda tag: f"s3://{BUCKET}/bench-{uuid.uuid4().hex}"),
    }
    times = {k: [] for k in variants}
    for name, (hook, root) in variants.items():  # warm-up
        run(hook, 10, root(name), name)
    for _ in range(args.repeats):
        for name, (hook, root) in variants.items():
            wall, _cpu = run(hook, args.steps, root(name), name)
            times[name].append(wall)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"latency {args.latency_ms:g} ms one way, {args.steps} steps, saving every {args.every}, {args.repeats} rounds")
    print(f"{'variant':<8} {'wall s':>8} {'x bare':>7} {'x local':>8}  all")
    for k, m in med.items():
        print(f"{k:<8} {m:8.3f} {m / med['bare']:7.3f} {m / med['local']:8.3f}  {' '.join(f'{x:.3f}' for x in times[k])}")
    shutil.rmtree(work, ignore_errors=True)
    proxy.stdin.close()
    proxy.wait()


if __name__ == "__main__":
    main()
