#!/usr/bin/env python3
"""Runs the reference smdebug's own tests/pytorch with the writing side swapped to smdebug_cpp.pytorch.

    python run_reference_pytorch_tests.py REFERENCE_CHECKOUT [--junit FILE] [pytest args...]

REFERENCE_CHECKOUT is a work tree of awslabs/sagemaker-debugger. It is copied to a temporary folder
(the checkout is not modified), its protobuf modules are generated there with protoc when missing,
and pytest runs its tests/pytorch from that folder (the tests open "tests/pytorch/test_json_configs/..."
relative to it) with a sitecustomize on PYTHONPATH that maps ``smdebug.pytorch`` and its submodules
(hook, collection, singleton_utils, utils) to ``smdebug_cpp.pytorch`` in pytest's interpreter and in
every process it spawns (the distributed tests start theirs with torch.multiprocessing). Everything else the tests import — ``smdebug.trials``,
``smdebug.SaveConfig``, ``smdebug.modes``, the test utilities — stays the reference's: the reference
reads what smdebug_cpp wrote, and the reference's configuration objects are handed to our hook.

The reference's profiler imports pyinstrument at import time (tests/conftest.py loads it); when
pyinstrument is not installed an inert stand-in package is put on the path, since no test here profiles.

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

SHIM = '''"""sitecustomize of run_reference_pytorch_tests.py: smdebug.pytorch is smdebug_cpp.pytorch in this
interpreter and in every process it starts (torch.multiprocessing spawns new interpreters)."""
import importlib
import importlib.abc
import importlib.util
import sys

_ALIASES = {
    "smdebug.pytorch": "smdebug_cpp.pytorch",
    "smdebug.pytorch.hook": "smdebug_cpp.pytorch.hook",
    "smdebug.pytorch.collection": "smdebug_cpp.pytorch.collection",
    "smdebug.pytorch.singleton_utils": "smdebug_cpp.pytorch.singleton_utils",
    "smdebug.pytorch.utils": "smdebug_cpp.pytorch.utils",
}


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path=None, target=None):
        if name in _ALIASES:
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec):
        return importlib.import_module(_ALIASES[spec.name])

    def exec_module(self, module):
        pass


sys.meta_path.insert(0, _Alias())
'''

PYINSTRUMENT_STUB = '''"""Inert stand-in of run_reference_pytorch_tests.py: only the reference's profiler imports
pyinstrument, and no test here profiles."""


class Profiler:
    def __init__(self, *args, **kwargs):
        raise RuntimeError("pyinstrument is not installed (stand-in of run_reference_pytorch_tests.py)")
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
        with open(os.path.join(shim_dir, "sitecustomize.py"), "w") as f:
            f.write(SHIM)
        if subprocess.run([sys.executable, "-c", "import pyinstrument"], capture_output=True).returncode != 0:
            os.makedirs(os.path.join(shim_dir, "pyinstrument"))
            with open(os.path.join(shim_dir, "pyinstrument", "__init__.py"), "w") as f:
                f.write(PYINSTRUMENT_STUB)
            with open(os.path.join(shim_dir, "pyinstrument", "renderers.py"), "w") as f:
                f.write("JSONRenderer = None  # stand-in (run_reference_pytorch_tests.py)\n")
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([shim_dir, ref] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
        env.pop("SMDEBUG_CONFIG_FILE_PATH", None)
        env.pop("TRAINING_JOB_NAME", None)
        check = subprocess.run([sys.executable, "-c", "import smdebug, smdebug.pytorch, smdebug_cpp.pytorch; "
                                "assert smdebug.pytorch is smdebug_cpp.pytorch; print(smdebug.__file__)"],
                               cwd=ref, env=env, capture_output=True, text=True)
        if check.returncode != 0 or not check.stdout.startswith(os.path.join(ref, "smdebug")):
            fail(f"the import shim does not work: {check.stdout.strip()} {check.stderr.strip()[-2000:]}")
        cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rfEs", "tests/pytorch"]
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
