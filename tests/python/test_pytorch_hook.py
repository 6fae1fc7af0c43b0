"""smdebug_cpp.pytorch.Hook and smdebug_cpp.Hook (issue 54): tiny trainings recorded through the C++
writer and read back with smdebug_cpp.trials, compared with the torch tensors they recorded.

Needs torch (Debian's python3-torch): without it these tests fail, they do not skip.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import smdebug_cpp
import smdebug_cpp.pytorch as smd
from smdebug_cpp import exceptions
from smdebug_cpp.trials import create_trial


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 16)
        self.relu = nn.ReLU()
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        return self.fc2(self.relu(self.fc1(x)))


PARAMS = ["Net_fc1.weight", "Net_fc1.bias", "Net_fc2.weight", "Net_fc2.bias"]


@pytest.fixture(autouse=True)
def _no_singleton():
    smd.del_hook()
    yield
    smd.del_hook()


def train(hook, model, steps, mode=None, record=None, backward=True, loss_module=None):
    """Runs `steps` steps; record[step] = {name: numpy copy} of what the hook should see."""
    torch.manual_seed(0)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    crit = loss_module or nn.CrossEntropyLoss()
    if mode is not None:
        hook.set_mode(mode)
    for _ in range(steps):
        x, y = torch.randn(4, 6), torch.randint(0, 3, (4,))
        seen = {f"Net_{n}": p.detach().numpy().copy() for n, p in model.named_parameters()}
        opt.zero_grad()
        h = model.fc1(x)  # the values fc1 / relu see (the forward below recomputes them identically)
        seen["fc1_output_0"] = h.detach().numpy().copy()
        seen["relu_output_0"] = torch.relu(h).detach().numpy().copy()
        out = model(x)
        loss = crit(out, y)
        seen["loss"] = loss.item()
        if backward:
            loss.backward()
            for n, p in model.named_parameters():
                seen[f"gradient/Net_{n}"] = p.grad.detach().numpy().copy()
            opt.step()
        if record is not None:
            record.append(seen)
    return crit


def test_default_collections_names_steps_values(tmp_path):
    out = str(tmp_path / "run")
    model = Net()
    hook = smd.Hook(out_dir=out, save_config=smd.SaveConfig(save_interval=3),
                    include_collections=[smd.CollectionKeys.WEIGHTS, smd.CollectionKeys.BIASES,
                                         smd.CollectionKeys.GRADIENTS, smd.CollectionKeys.LOSSES])
    hook.register_module(model)
    crit = nn.CrossEntropyLoss()
    hook.register_loss(crit)
    seen = []
    train(hook, model, 10, mode=smd.modes.TRAIN, record=seen, loss_module=crit)
    hook.close()

    trial = create_trial(out)
    assert trial.steps() == [0, 3, 6, 9]
    assert trial.steps(mode=smdebug_cpp.modes.TRAIN) == [0, 3, 6, 9]
    expected = set(PARAMS) | {"gradient/" + p for p in PARAMS} | {"CrossEntropyLoss_output_0"}
    assert set(trial.tensor_names()) == expected
    assert set(trial.tensor_names(collection="weights")) == {"Net_fc1.weight", "Net_fc2.weight"}
    assert set(trial.tensor_names(collection="biases")) == {"Net_fc1.bias", "Net_fc2.bias"}
    assert set(trial.tensor_names(collection="gradients")) == {"gradient/" + p for p in PARAMS}
    assert trial.tensor_names(collection="losses") == ["CrossEntropyLoss_output_0"]
    for step in trial.steps():
        for name in expected - {"CrossEntropyLoss_output_0"}:
            value = trial.tensor(name).value(step)
            np.testing.assert_array_equal(value, seen[step][name])
            assert value.dtype == np.float32
        np.testing.assert_allclose(trial.tensor("CrossEntropyLoss_output_0").value(step), seen[step]["loss"], rtol=1e-6)
    assert trial.workers() == ["worker_0"]
    assert os.path.exists(os.path.join(out, "training_job_end.ts"))


def test_save_all_modes_and_module_outputs(tmp_path):
    out = str(tmp_path / "run")
    model = Net()
    hook = smd.Hook(out_dir=out, save_config=smd.SaveConfig(save_steps=[0, 2]), save_all=True)
    hook.register_module(model)
    seen = []
    train(hook, model, 3, mode=smd.modes.TRAIN, record=seen)
    with torch.no_grad():
        train(hook, model, 3, mode=smd.modes.EVAL, backward=False)
    hook.close()

    trial = create_trial(out)
    T, E = smdebug_cpp.modes.TRAIN, smdebug_cpp.modes.EVAL
    assert trial.steps(mode=T) == [0, 2]
    assert trial.steps(mode=E) == [0, 2]
    assert trial.steps() == [0, 2, 3, 5]          # global steps: TRAIN 0-2, EVAL 3-5
    names = set(trial.tensor_names())
    for n in ["fc1_input_0", "fc1_output_0", "relu_input_0", "relu_output_0", "fc2_output_0", "Net_input_0",
              "Net_output_0", "Net_fc1.weight", "gradient/Net_fc2.bias"]:
        assert n in names, n
    np.testing.assert_allclose(trial.tensor("fc1_output_0").value(2, mode=T), seen[2]["fc1_output_0"], rtol=1e-6)
    np.testing.assert_allclose(trial.tensor("relu_output_0").value(0, mode=T), seen[0]["relu_output_0"], rtol=1e-6)
    # gradients are not saved in EVAL
    assert trial.tensor("gradient/Net_fc1.weight").steps(mode=E) == []
    assert trial.tensor("Net_fc1.weight").steps(mode=E) == [0, 2]


def test_custom_tensors_scalars_and_record_tensor_value(tmp_path):
    out = str(tmp_path / "run")
    model = Net()
    hook = smd.Hook(out_dir=out, save_config=smd.SaveConfig(save_interval=2))
    hook.register_module(model)
    hook.save_tensor("before_first_step", torch.arange(4, dtype=torch.int64))   # into step 0, `default`
    hook.save_scalar("lr", 0.1, timestamp=1234.5)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(4):
        x, y = torch.randn(4, 6), torch.randint(0, 3, (4,))
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        hook.record_tensor_value("xent_loss", tensor_value=loss)
        hook.save_tensor("mine", np.full((2, 2), step, dtype=np.float64), "custom")
        loss.backward()
        opt.step()
    hook.close()

    trial = create_trial(out)
    assert trial.tensor("before_first_step").steps() == [0]
    np.testing.assert_array_equal(trial.tensor("before_first_step").value(0), np.arange(4))
    assert trial.tensor_names(collection="default") == ["before_first_step"]
    assert trial.tensor("scalar/lr").steps() == [0]
    assert trial.tensor("xent_loss_output_0").steps() == [0, 2]          # `losses` matches it
    assert "xent_loss_output_0" in trial.tensor_names(collection="losses")
    assert trial.tensor("mine").steps() == [0, 2]
    np.testing.assert_array_equal(trial.tensor("mine").value(2), np.full((2, 2), 2.0))
    assert trial.tensor_names(collection="custom") == ["mine"]


def test_reductions_and_collection_settings(tmp_path):
    out = str(tmp_path / "run")
    model = Net()
    hook = smd.Hook(out_dir=out, save_config=smd.SaveConfig(save_steps=[0, 1]),
                    include_collections=["weights", "relu_acts"],
                    reduction_config=smd.ReductionConfig(reductions=["max", "mean"], norms=["l2"]))
    coll = hook.get_collection("relu_acts")
    coll.include("relu_output")
    coll.save_config = smd.SaveConfig(save_steps=[3])
    coll.reduction_config = smd.ReductionConfig(save_raw_tensor=True)
    hook.register_module(model)
    seen = []
    train(hook, model, 4, record=seen)
    hook.close()
    trial = create_trial(out)
    assert trial.steps() == [0, 1, 3]
    w = trial.tensor("Net_fc1.weight")
    assert w.reduction_value(1, "max") == pytest.approx(float(seen[1]["Net_fc1.weight"].max()))
    assert w.reduction_value(0, "l2", abs=False) == pytest.approx(float(np.linalg.norm(seen[0]["Net_fc1.weight"])), rel=1e-5)
    assert trial.tensor("relu_output_0").steps() == [0, 3]   # save_steps add to the interval (500, from 0)
    np.testing.assert_allclose(trial.tensor("relu_output_0").value(3), seen[3]["relu_output_0"], rtol=1e-6)


def test_json_config_and_get_hook(tmp_path, monkeypatch):
    out = str(tmp_path / "run")
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps({"LocalPath": out, "HookParameters": {"save_steps": "1, 2"},
                               "CollectionConfigurations": [{"CollectionName": "weights"},
                                                            {"CollectionName": "gradients"}]}))
    monkeypatch.setenv("SMDEBUG_CONFIG_FILE_PATH", str(cfg))
    hook = smd.get_hook(create_if_not_exists=True)
    assert isinstance(hook, smd.Hook) and hook.out_dir == out
    assert smd.get_hook() is hook
    model = Net()
    hook.register_module(model)
    train(hook, model, 3)
    hook.close()
    trial = create_trial(out)
    assert trial.steps() == [0, 1, 2]   # save_steps add to the interval (500, from 0), as in the reference
    assert "gradient/Net_fc1.weight" in trial.tensor_names() and "Net_fc2.weight" in trial.tensor_names()
    assert "Net_fc1.bias" not in trial.tensor_names()

    smd.del_hook()
    monkeypatch.setenv("USE_SMDEBUG", "0")
    assert smd.get_hook(create_if_not_exists=True) is None


def test_steps_that_save_nothing_install_nothing(tmp_path):
    out = str(tmp_path / "run")
    model = Net()
    hook = smd.Hook(out_dir=out, save_config=smd.SaveConfig(save_interval=5),
                    include_collections=["weights", "gradients"])
    hook.register_module(model)
    train(hook, model, 2)   # steps 0 (saves) and 1 (saves nothing)
    assert not hook.saving
    assert hook._step_handles == []                     # no gradient / submodule hooks on step 1
    assert all(len(p._backward_hooks or {}) == 0 for p in model.parameters())
    hook.close()
    assert create_trial(out).steps() == [0]


def test_framework_free_hook_numpy_and_array_protocol(tmp_path):
    out = str(tmp_path / "run")

    class Wrapped:  # anything with __array__ (JAX arrays, ...)
        def __init__(self, a):
            self.a = a

        def __array__(self, dtype=None):
            return self.a

    hook = smdebug_cpp.Hook(out_dir=out, save_config=smdebug_cpp.SaveConfig(save_interval=2),
                            include_collections=["weights", "losses"])
    values = {}
    for step in range(5):
        saving = hook.next_step()
        assert saving == (step % 2 == 0) == hook.saving
        w = np.random.rand(3, 3).astype(np.float32)
        values[step] = w
        hook.save_tensor("dense.weight", Wrapped(w), "weights")
        hook.save_tensor("loss_output_0", np.float64(step) / 10, "losses")
    hook.close()
    trial = create_trial(out)
    assert trial.steps() == [0, 2, 4]
    for s in (0, 2, 4):
        np.testing.assert_array_equal(trial.tensor("dense.weight").value(s), values[s])
    assert trial.tensor("loss_output_0").value(4) == pytest.approx(0.4)


def test_bad_input_raises_typed_errors(tmp_path):
    out = str(tmp_path / "run")
    hook = smd.Hook(out_dir=out, save_config=smd.SaveConfig(save_interval=1))
    model = Net()
    hook.register_module(model)
    model(torch.randn(2, 6))
    with pytest.raises(exceptions.SMDebugTypeError, match="bfloat16"):
        hook.save_tensor("bf", torch.ones(2, dtype=torch.bfloat16))
    with pytest.raises(exceptions.SMDebugTypeError, match="object"):
        hook.save_tensor("obj", np.array([object()]))
    with pytest.raises(exceptions.SMDebugValueError, match="Invalid mode"):
        hook.set_mode("TRAINING")
    with pytest.raises(exceptions.SMDebugTypeError):
        hook.register_module("not a module")
    with pytest.raises(exceptions.SMDebugValueError):
        hook.save_tensor("", torch.ones(1))
    with pytest.raises(exceptions.SMDebugTypeError, match="non scalar"):
        hook.save_scalar("s", [1, 2])
    hook.close()

    with pytest.raises(exceptions.SMDebugValueError, match="reduction"):
        smd.Hook(out_dir=str(tmp_path / "r2"), reduction_config=_bad_reduction())
    with pytest.raises(exceptions.SMDebugValueError):
        smd.Hook(out_dir=str(tmp_path / "r3"), include_workers="some")
    with pytest.raises(exceptions.SMDebugError, match="training_job_end|finished trial"):
        smd.Hook(out_dir=out)          # holds a finished trial
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(exceptions.SMDebugValueError, match="bad.json"):
        smd.Hook.create_from_json_file(str(bad))
    with pytest.raises(FileNotFoundError):
        smd.Hook.create_from_json_file(str(tmp_path / "missing.json"))


def _bad_reduction():
    class R:  # a reference-style object with an unknown reduction name
        reductions, abs_reductions, norms, abs_norms = ["median"], [], [], []
        save_raw_tensor, save_shape = False, False
    return R()


def test_unstorable_recorded_tensor_does_not_stop_training(tmp_path):
    out = str(tmp_path / "run")

    class Half(nn.Module):
        def forward(self, x):
            return x.to(torch.bfloat16)

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)
            self.to_bf = Half()

        def forward(self, x):
            return self.to_bf(self.fc(x)).float()

    model = M()
    hook = smd.Hook(out_dir=out, save_config=smd.SaveConfig(save_interval=1), save_all=True)
    hook.register_module(model)
    for _ in range(2):
        model(torch.randn(2, 3)).sum().backward()
    hook.close()
    trial = create_trial(out)
    assert trial.steps() == [0, 1]
    assert "fc_output_0" in trial.tensor_names() and "to_bf_output_0" not in trial.tensor_names()


def test_crash_leaves_completed_steps(tmp_path):
    out = str(tmp_path / "run")
    script = f"""
import os, torch, torch.nn as nn
import smdebug_cpp.pytorch as smd
m = nn.Linear(3, 2)
hook = smd.Hook(out_dir={out!r}, save_config=smd.SaveConfig(save_interval=1), include_collections=["weights"])
hook.register_module(m)
for i in range(5):
    m(torch.randn(2, 3))
hook.flush()
os._exit(3)   # dies without close(): steps 0-3 are closed and written, step 4 is lost
"""
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert proc.returncode == 3, proc.stderr
    trial = create_trial(out)
    assert trial.steps() == [0, 1, 2, 3]
    assert not os.path.exists(os.path.join(out, "training_job_end.ts"))
    assert trial.tensor("Linear_weight").value(3).shape == (2, 3)


def test_reference_objects_accepted(tmp_path):
    """SaveConfig / modes of another package (the reference's) are read by their attributes."""

    class ModeKeys:  # stands for smdebug.modes
        def __init__(self, name):
            self.name = name

    class RefSaveConfigMode:
        def __init__(self, save_interval=None, start_step=None, end_step=None, save_steps=None):
            self.save_interval, self.start_step, self.end_step, self.save_steps = save_interval, start_step, end_step, save_steps

    class RefSaveConfig:
        def __init__(self, modes):
            self.mode_save_configs = modes

    TRAIN = ModeKeys("TRAIN")
    out = str(tmp_path / "run")
    hook = smd.Hook(out_dir=out, save_config=RefSaveConfig({TRAIN: RefSaveConfigMode(save_steps=[1])}),
                    include_collections=["weights"])
    model = Net()
    hook.register_module(model)
    hook.set_mode(TRAIN)
    train(hook, model, 3)
    hook.close()
    trial = create_trial(out)
    assert trial.steps(mode=smdebug_cpp.modes.TRAIN) == [0, 1]


def test_s3_out_dir_through_s3rver():
    """An s3:// out_dir: the C++ Hook uploads the steps; smdebug_cpp reads them back from S3.
    Runs under tests/s3rver/run-with-s3rver.sh (python.pytorch_hook); without it, it fails."""
    import uuid

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from s3rver_support import BUCKET, s3rver_environment

    with s3rver_environment():
        url = f"s3://{BUCKET}/pytorch-hook/{uuid.uuid4().hex}"
        model = Net()
        hook = smd.Hook(out_dir=url, save_config=smd.SaveConfig(save_interval=2),
                        include_collections=["weights", "gradients", "losses"])
        hook.register_module(model)
        seen = []
        train(hook, model, 5, record=seen)
        hook.close()
        trial = create_trial(url)
        assert trial.steps() == [0, 2, 4]
        for s in trial.steps():
            np.testing.assert_array_equal(trial.tensor("Net_fc2.weight").value(s), seen[s]["Net_fc2.weight"])
            np.testing.assert_array_equal(trial.tensor("gradient/Net_fc1.bias").value(s), seen[s]["gradient/Net_fc1.bias"])


def _forwarding_proxy(upstream_host, upstream_port):
    """A TCP proxy served by Python threads of this process: it only forwards while the hook's
    calls let other Python threads run. Returns its port."""
    import socket
    import threading

    listener = socket.create_server(("127.0.0.1", 0))

    def pump(src, dst):
        try:
            while data := src.recv(1 << 16):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def serve():
        while True:
            client, _ = listener.accept()
            server = socket.create_connection((upstream_host, upstream_port))
            threading.Thread(target=pump, args=(client, server), daemon=True).start()
            threading.Thread(target=pump, args=(server, client), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    return listener.getsockname()[1]


def test_s3_hook_lets_other_python_threads_run():
    """Opening an s3:// out_dir, stepping and closing go to the network with the GIL released: an
    endpoint served by Python threads of the same process (here a proxy in front of s3rver) answers.
    Holding the GIL there stalled every other Python thread, and with this endpoint deadlocked until
    the request timed out. Runs under tests/s3rver/run-with-s3rver.sh (python.pytorch_hook)."""
    import urllib.parse
    import uuid

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from s3rver_support import BUCKET, s3rver_environment

    with s3rver_environment():
        up = urllib.parse.urlsplit(os.environ["AWS_ENDPOINT_URL"])
        os.environ["AWS_ENDPOINT_URL"] = f"http://127.0.0.1:{_forwarding_proxy(up.hostname, up.port)}"
        url = f"s3://{BUCKET}/pytorch-hook-gil/{uuid.uuid4().hex}"
        model = Net()
        hook = smd.Hook(out_dir=url, save_config=smd.SaveConfig(save_interval=1), include_collections=["weights"])
        hook.register_module(model)
        seen = []
        train(hook, model, 3, record=seen)
        hook.close()
        trial = create_trial(url)
        assert trial.steps() == [0, 1, 2]
        np.testing.assert_array_equal(trial.tensor("Net_fc2.weight").value(2), seen[2]["Net_fc2.weight"])


def test_flight_recorder_writes_the_steps_before_the_first_nan(tmp_path):
    """anomaly_window=5 with a save interval of 1000: a weight set to NaN before step 150's forward
    leaves steps 0 (the save config) and 145-150 (the window and the anomaly), and step 150 holds the NaN."""
    out = str(tmp_path / "run")
    model = Net()
    hook = smd.Hook(out_dir=out, save_config=smd.SaveConfig(save_interval=1000), anomaly_window=5,
                    include_collections=["weights", "biases", "gradients", "losses"])
    hook.register_module(model)
    crit = nn.CrossEntropyLoss()
    hook.register_loss(crit)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    weights = {}
    for step in range(160):
        if step == 150:
            with torch.no_grad():
                model.fc1.weight[0, 0] = float("nan")
        weights[step] = model.fc2.weight.detach().numpy().copy()
        x, y = torch.randn(4, 6), torch.randint(0, 3, (4,))
        opt.zero_grad()
        loss = crit(model(x), y)
        loss.backward()
        opt.step()
    hook.close()
    trial = create_trial(out)
    assert trial.steps() == [0, 145, 146, 147, 148, 149, 150]
    assert np.isnan(trial.tensor("Net_fc1.weight").value(150)[0, 0])
    assert np.isfinite(trial.tensor("Net_fc1.weight").value(149)).all()
    assert np.isnan(trial.tensor("CrossEntropyLoss_output_0").value(150))
    for s in (0, 145, 149):
        np.testing.assert_array_equal(trial.tensor("Net_fc2.weight").value(s), weights[s])
    assert trial.tensor("gradient/Net_fc2.bias").steps() == [0, 145, 146, 147, 148, 149, 150]


def test_flight_recorder_bad_window():
    with pytest.raises(exceptions.SMDebugValueError, match="anomaly_window"):
        smd.Hook(out_dir="/tmp/never-written", anomaly_window=-1)


def test_model_with_a_registered_hook_pickles(tmp_path):
    """torch.save(model) pickles the hooks registered on it; they come back inert (as the reference's)."""
    model = Net()
    hook = smd.Hook(out_dir=str(tmp_path / "run"), save_config=smd.SaveConfig(save_interval=1), save_all=True)
    hook.register_module(model)
    train(hook, model, 2)
    torch.save(model, str(tmp_path / "model.pt"))
    again = torch.load(str(tmp_path / "model.pt"))
    again(torch.randn(2, 6)).sum().backward()   # runs; the unpickled hook records nothing
    hook.close()
    assert create_trial(str(tmp_path / "run")).steps() == [0, 1]


def test_trace_events_when_profiling_is_configured(tmp_path, monkeypatch):
    cfg = tmp_path / "profiler.json"
    cfg.write_text(json.dumps({"ProfilingParameters": {"ProfilerEnabled": True, "LocalPath": str(tmp_path / "prof")}}))
    monkeypatch.setenv("SMPROFILER_CONFIG_PATH", str(cfg))
    hook = smd.Hook(out_dir=str(tmp_path / "run"))
    hook.record_trace_events(timestamp=1000.5, training_phase="Training", op_name="EpochStart", phase="B", epoch=1)
    hook.close()
    files = list((tmp_path / "prof" / "framework").rglob("*_pythontimeline.json"))
    assert len(files) == 1
    events = json.loads(files[0].read_text())
    assert events[1]["name"] == "EpochStart" and events[1]["ts"] == 1000500000 and events[1]["args"] == {"epoch": "1"}


def test_step_on_optimizer_counts_optimizer_steps(tmp_path):
    """Gradient accumulation: 2 micro-batches per optimizer step make one step; the gradient saved is
    the accumulated one the optimizer applies; each micro-batch's loss is numbered."""
    out = str(tmp_path / "run")
    model = Net()
    crit = nn.CrossEntropyLoss()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    hook = smd.Hook(out_dir=out, save_config=smd.SaveConfig(save_interval=1), step_on="optimizer",
                    include_collections=["weights", "gradients", "losses"])
    hook.register_module(model)
    hook.register_loss(crit)
    hook.register_optimizer(opt)
    grads, weights = [], []
    for step in range(3):
        opt.zero_grad()
        weights.append(model.fc1.weight.detach().numpy().copy())
        for _ in range(2):
            crit(model(torch.randn(4, 6)), torch.randint(0, 3, (4,))).backward()
        grads.append(model.fc1.weight.grad.detach().numpy().copy())
        opt.step()
    hook.close()
    trial = create_trial(out)
    assert trial.steps() == [0, 1, 2]
    for s in range(3):
        np.testing.assert_array_equal(trial.tensor("gradient/Net_fc1.weight").value(s), grads[s])
        np.testing.assert_array_equal(trial.tensor("Net_fc1.weight").value(s), weights[s])
    assert {"CrossEntropyLoss_output_0", "CrossEntropyLoss_output_1"} <= set(trial.tensor_names())
    with pytest.raises(exceptions.SMDebugValueError):
        smd.Hook(out_dir=str(tmp_path / "x"), step_on="epoch")
