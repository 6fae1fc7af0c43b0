#!/usr/bin/env python3
"""Runs the reference smdebug's own tests/pytorch with the writing side swapped to smdebug_cpp.pytorch.

    python run_reference_pytorch_tests.py REFERENCE_CHECKOUT [--junit FILE] [pytest args...]

REFERENCE_CHECKOUT is a work tree of awslabs/sagemaker-debugger. It is copied to a temporary folder
(the checkout is not modified), its protobuf modules are generated there with protoc when missing,
and pytest runs its tests/pytorch from that folder (the tests open "tests/pytorch/test_json_configs/..."
relative to it) with a plugin that maps ``smdebug.pytorch`` and its submodules (hook, collection,
singleton_utils, utils) to ``smdebug_cpp.pytorch``. Everything else the tests import — ``smdebug.trials``,
``smdebug.SaveConfig``, ``smdebug.modes``, the test utilities — stays the reference's: the reference
reads what smdebug_cpp wrote, and the reference's configuration objects are handed to our hook.

The reference's profiler imports pyinstrument at import time (tests/conftest.py loads it); when
pyinstrument is not installed an inert stand-in module is registered, since no test here profiles.

The interpreter must import smdebug_cpp, torch, numpy, protobuf and pytest (the package's venv
from scripts/python-venv.sh with Debian's python3-torch). A missing checkout, protoc or module is a
failure (exit 2), never a skip. Prints "reference tests/pytorch: P passed, F failed, S skipped".
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

SHIM = '''"""pytest plugin: smdebug.pytorch is smdebug_cpp.pytorch (run_reference_pytorch_tests.py)."""
import importlib.util
import sys
import types

if importlib.util.find_spec("pyinstrument") is None:  # only the reference profiler uses it
    pyi = types.ModuleType("pyinstrument")
    renderers = types.ModuleType("pyinstrument.renderers")

    class Profiler:
        def __init__(self, *args, **kwargs):
            raise RuntimeError("pyinstrument is not installed (stand-in of run_reference_pytorch_tests.py)")

    class JSONRenderer:
        def __init__(self, *args, **kwargs):
            raise RuntimeError("pyinstrument is not installed (stand-in of run_reference_pytorch_tests.py)")

    pyi.Profiler = Profiler
    renderers.JSONRenderer = JSONRenderer
    pyi.renderers = renderers
    sys.modules["pyinstrument"] = pyi
    sys.modules["pyinstrument.renderers"] = renderers

import smdebug  # the reference (reader, configs, test utilities)
import smdebug_cpp.pytorch as ours
import smdebug_cpp.pytorch.collection
import smdebug_cpp.pytorch.hook
import smdebug_cpp.pytorch.singleton_utils
import smdebug_cpp.pytorch.utils

sys.modules["smdebug.pytorch"] = ours
sys.modules["smdebug.pytorch.hook"] = ours.hook
sys.modules["smdebug.pytorch.collection"] = ours.collection
sys.modules["smdebug.pytorch.singleton_utils"] = ours.singleton_utils
sys.modules["smdebug.pytorch.utils"] = ours.utils
smdebug.pytorch = ours
assert smdebug.__file__.startswith(REFERENCE), smdebug.__file__
'''


def fail(message):
    print(f"run_reference_pytorch_tests: {message}", file=sys.stderr)
    sys.exit(2)


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    checkout = os.path.abspath(argv[0])
    junit = None
    rest = argv[1:]
    if rest[:1] == ["--junit"]:
        junit, rest = os.path.abspath(rest[1]), rest[2:]
    if not os.path.isdir(os.path.join(checkout, "tests", "pytorch")) or not os.path.isdir(os.path.join(checkout, "smdebug")):
        fail(f"{checkout} is not a checkout of awslabs/sagemaker-debugger (no smdebug/ and tests/pytorch/)")
    for module in ("smdebug_cpp", "torch", "numpy", "google.protobuf", "pytest"):
        probe = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True)
        if probe.returncode != 0:
            fail(f"{sys.executable} cannot import {module}: {probe.stderr.strip().splitlines()[-1:]}")
    protoc = shutil.which("protoc")

    work = tempfile.mkdtemp(prefix="smdebug-ref-pytorch-")
    try:
        ref = os.path.join(work, "ref")
        shutil.copytree(checkout, ref, ignore=shutil.ignore_patterns(".git", "__pycache__"))
        proto_dir = os.path.join(ref, "smdebug", "core", "tfevent", "proto")
        protos = sorted(f for f in os.listdir(proto_dir) if f.endswith(".proto"))
        if any(not os.path.exists(os.path.join(proto_dir, p[:-6] + "_pb2.py")) for p in protos):
            if protoc is None:
                fail("protoc is not installed (apt-get install protobuf-compiler): the reference needs its _pb2 modules")
            subprocess.run([protoc, "--python_out=.", *[os.path.join("smdebug", "core", "tfevent", "proto", p) for p in protos]],
                           cwd=ref, check=True)
        shim_dir = os.path.join(work, "shim")
        os.makedirs(shim_dir)
        with open(os.path.join(shim_dir, "smdebug_cpp_reference_shim.py"), "w") as f:
            f.write(f"REFERENCE = {os.path.join(ref, 'smdebug')!r}\n" + SHIM)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([ref, shim_dir] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
        env.pop("SMDEBUG_CONFIG_FILE_PATH", None)
        env.pop("TRAINING_JOB_NAME", None)
        cmd = [sys.executable, "-m", "pytest", "-p", "smdebug_cpp_reference_shim", "-p", "no:cacheprovider", "-q", "-rfEs",
               "tests/pytorch"]
        if junit:
            cmd += ["--junitxml", junit]
        cmd += rest
        proc = subprocess.run(cmd, cwd=ref, env=env, capture_output=True, text=True)
        sys.stdout.write(proc.stdout)
        sys.stderr.write(proc.stderr[-20000:])
        summary = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
        counts = {k: int(n) for n, k in re.findall(r"(\d+) (passed|failed|skipped|error|errors)", summary)}
        passed, failed = counts.get("passed", 0), counts.get("failed", 0) + counts.get("error", 0) + counts.get("errors", 0)
        print(f"reference tests/pytorch: {passed} passed, {failed} failed, {counts.get('skipped', 0)} skipped")
        if proc.returncode not in (0, 1):
            fail(f"pytest exited with {proc.returncode}")
        return 0 if failed == 0 and passed > 0 and proc.returncode == 0 else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
