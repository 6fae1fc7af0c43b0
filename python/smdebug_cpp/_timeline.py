"""Trace events of Hook.record_trace_events, in the reference's timeline files.

The reference's profiler is not carried over (docs/deviations.md D25); this keeps its one recording
call. Events are written only when profiling is configured as the reference reads it: the JSON file
SMPROFILER_CONFIG_PATH names (default /opt/ml/input/config/profilerconfig.json) with
ProfilingParameters.ProfilerEnabled true; they go, at close(), to one Chrome-trace JSON file per
process, <LocalPath>/framework/pevents/<YYYYMMDDHH>/<start us>_<pid>_<worker>_pythontimeline.json.
"""
import json
import os
import threading
import time

DEFAULT_PROFILER_CONFIG = "/opt/ml/input/config/profilerconfig.json"


def _profiler_dir():
    path = os.environ.get("SMPROFILER_CONFIG_PATH", DEFAULT_PROFILER_CONFIG)
    try:
        with open(path) as f:
            params = json.load(f).get("ProfilingParameters", {})
    except (OSError, ValueError, AttributeError):
        return None
    enabled = params.get("ProfilerEnabled", False)
    if str(enabled).lower() not in ("true", "1"):
        return None
    return params.get("LocalPath", "/opt/ml/output/profiler")


class Timeline:
    def __init__(self, worker):
        self.base = _profiler_dir()
        self.worker = worker
        self.start = time.time()
        self.events = []
        self.lock = threading.Lock()

    @property
    def enabled(self):
        return self.base is not None

    def record(self, timestamp, training_phase="", op_name="", phase="X", duration=1, **kwargs):
        if self.base is None:
            return
        event = {"name": op_name, "cat": training_phase, "ph": phase, "ts": int(float(timestamp) * 1e6),
                 "pid": os.getpid(), "tid": threading.get_ident(), "args": {k: str(v) for k, v in kwargs.items()}}
        if phase == "X":
            event["dur"] = int(float(duration) * 1e6)
        with self.lock:
            self.events.append(event)

    def close(self):
        if self.base is None or not self.events:
            return
        start_us = int(self.start * 1e6)
        folder = os.path.join(self.base, "framework", "pevents", time.strftime("%Y%m%d%H", time.gmtime(self.start)))
        os.makedirs(folder, exist_ok=True)
        name = os.path.join(folder, f"{start_us}_{os.getpid()}_{self.worker}_pythontimeline.json")
        with self.lock:
            events, self.events = self.events, []
        meta = {"name": "process_name", "ph": "M", "pid": os.getpid(), "args": {"name": self.worker}}
        tmp = name + ".tmp"
        with open(tmp, "w") as f:
            json.dump([meta] + events, f)
        os.replace(tmp, name)
