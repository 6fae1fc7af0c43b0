#!/usr/bin/env python3
"""Twin trials: the same PyTorch loop recorded by the reference smdebug.pytorch.Hook and by
smdebug_cpp.pytorch.Hook, both read by the reference reader, must hold the same trial.

    python compare_with_reference_hook.py REFERENCE_CHECKOUT

REFERENCE_CHECKOUT is a work tree of awslabs/sagemaker-debugger; it is copied to a temporary
folder and its protobuf modules generated there (protoc). pyinstrument, which only its profiler
imports, is replaced by an inert module when it is not installed. Two configurations: the default
collections (weights, biases, gradients, losses) and save_all. Compared, per configuration: steps
per mode, tensor names, each collection's tensor names, and every value at every step (exactly).
Then the flight recorder (anomaly_window=5, save interval 1000, a NaN from step 150): the reference
reads steps 0 and 145-150, and step 150 holds the NaN.
Exit status 0 when they agree, 1 with the differences listed, 2 when the tools are missing.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import types

import numpy as np
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.relu = nn.ReLU()
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        return self.fc2(self.relu(self.fc1(x)))


def prepare_reference(checkout, work):
    if not os.path.isdir(os.path.join(checkout, "smdebug")):
        print(f"compare_with_reference_hook: {checkout} is not a sagemaker-debugger checkout", file=sys.stderr)
        sys.exit(2)
    ref = os.path.join(work, "ref")
    shutil.copytree(checkout, ref, ignore=shutil.ignore_patterns(".git", "__pycache__", "tests", "examples", "docs"))
    proto_dir = os.path.join("smdebug", "core", "tfevent", "proto")
    protos = [os.path.join(proto_dir, f) for f in sorted(os.listdir(os.path.join(ref, proto_dir))) if f.endswith(".proto")]
    if shutil.which("protoc") is None:
        print("compare_with_reference_hook: protoc is not installed (apt-get install protobuf-compiler)", file=sys.stderr)
        sys.exit(2)
    subprocess.run(["protoc", "--python_out=.", *protos], cwd=ref, check=True)
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


def record(smd, out_dir, save_all):
    torch.manual_seed(0)
    model = Net()
    crit = nn.CrossEntropyLoss()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    kwargs = {"save_all": True} if save_all else {"include_collections": ["weights", "biases", "gradients", "losses"]}
    hook = smd.Hook(out_dir=out_dir, save_config=smd.SaveConfig(save_interval=2), **kwargs)
    hook.register_module(model)
    hook.register_loss(crit)
    gen = torch.Generator().manual_seed(1)
    hook.set_mode(smd.modes.TRAIN)
    for _ in range(7):
        x, y = torch.randn(5, 8, generator=gen), torch.randint(0, 4, (5,), generator=gen)
        opt.zero_grad()
        loss = crit(model(x), y)
        loss.backward()
        opt.step()
    hook.set_mode(smd.modes.EVAL)
    with torch.no_grad():
        for _ in range(3):
            x, y = torch.randn(5, 8, generator=gen), torch.randint(0, 4, (5,), generator=gen)
            crit(model(x), y)
    hook.close()
    smd.del_hook()


def compare(trials, label):
    from smdebug import modes
    from smdebug.trials import create_trial

    a, b = (create_trial(t) for t in trials)
    problems = []
    for mode in (modes.TRAIN, modes.EVAL, modes.GLOBAL):
        if a.steps(mode=mode) != b.steps(mode=mode):
            problems.append(f"{label}: steps({mode.name}) reference {a.steps(mode=mode)} ours {b.steps(mode=mode)}")
    if sorted(a.tensor_names()) != sorted(b.tensor_names()):
        problems.append(f"{label}: tensor names differ: only reference {sorted(set(a.tensor_names()) - set(b.tensor_names()))}, "
                        f"only ours {sorted(set(b.tensor_names()) - set(a.tensor_names()))}")
    for coll in sorted(set(a.collections()) & set(b.collections())):
        na, nb = sorted(a.tensor_names(collection=coll)), sorted(b.tensor_names(collection=coll))
        if na != nb:
            problems.append(f"{label}: collection {coll}: reference {na} ours {nb}")
    for name in sorted(set(a.tensor_names()) & set(b.tensor_names())):
        for mode in (modes.TRAIN, modes.EVAL):
            sa, sb = a.tensor(name).steps(mode=mode), b.tensor(name).steps(mode=mode)
            if sa != sb:
                problems.append(f"{label}: {name} steps({mode.name}) reference {sa} ours {sb}")
                continue
            for s in sa:
                va, vb = a.tensor(name).value(s, mode=mode), b.tensor(name).value(s, mode=mode)
                if va.shape != vb.shape or va.dtype != vb.dtype or not np.array_equal(va, vb, equal_nan=True):
                    problems.append(f"{label}: {name} at {mode.name} step {s}: values differ")
    print(f"{label}: {len(a.tensor_names())} tensors, steps {a.steps()}, "
          f"{'the same trial' if not problems else str(len(problems)) + ' differences'}")
    return problems


def flight_recorder(ours, out_dir):
    """SaveConfig(save_interval=1000), anomaly_window=5, a weight set to NaN before step 150's forward:
    the reference reads steps 0 and 145-150, and step 150 holds the NaN."""
    from smdebug.trials import create_trial

    torch.manual_seed(0)
    model = Net()
    crit = nn.CrossEntropyLoss()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    hook = ours.Hook(out_dir=out_dir, save_config=ours.SaveConfig(save_interval=1000), anomaly_window=5,
                     include_collections=["weights", "biases", "gradients", "losses"])
    hook.register_module(model)
    hook.register_loss(crit)
    for step in range(170):
        if step == 150:
            with torch.no_grad():
                model.fc1.weight[0, 0] = float("nan")
        opt.zero_grad()
        crit(model(torch.randn(5, 8)), torch.randint(0, 4, (5,))).backward()
        opt.step()
    hook.close()
    ours.del_hook()
    trial = create_trial(out_dir)
    problems = []
    if trial.steps() != [0, 145, 146, 147, 148, 149, 150]:
        problems.append(f"flight recorder: steps {trial.steps()}, not [0, 145, ..., 150]")
    elif not np.isnan(trial.tensor("Net_fc1.weight").value(150)[0, 0]):
        problems.append("flight recorder: step 150 does not hold the NaN")
    print(f"flight recorder: steps {trial.steps()}, {'as expected' if not problems else 'wrong'}")
    return problems


def main(argv):
    if len(argv) != 1:
        print(__doc__)
        return 2
    torch.set_num_threads(1)
    os.environ.pop("SMDEBUG_CONFIG_FILE_PATH", None)
    work = tempfile.mkdtemp(prefix="twin-trials-")
    try:
        prepare_reference(os.path.abspath(argv[0]), work)
        import smdebug.pytorch as reference
        import smdebug_cpp.pytorch as ours

        problems = []
        for save_all in (False, True):
            label = "save_all" if save_all else "default collections"
            dirs = [os.path.join(work, f"{who}-{int(save_all)}") for who in ("reference", "ours")]
            record(reference, dirs[0], save_all)
            record(ours, dirs[1], save_all)
            problems += compare(dirs, label)
        problems += flight_recorder(ours, os.path.join(work, "flight-recorder"))
        for p in problems:
            print(p)
        return 1 if problems else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
