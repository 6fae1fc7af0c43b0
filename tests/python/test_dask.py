"""smdebug_cpp.dask on a real distributed.LocalCluster (2 worker processes): its answers equal the
single-process package on local and s3rver trials, survive a Dask worker killed mid-computation,
and read a trial still being written up to its complete steps.

Environment (set by tests/cmake/python.cmake): SMDEBUG_CLI (the `smdebug` tool, which
find_first runs and which the test compares with), SMDEBUG_CRASH_WRITER (a Hook writing steps until
killed), SMDEBUG_S3RVER_ENDPOINT (tests/s3rver/run-with-s3rver.sh) for the S3 case.
"""
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

os.environ.setdefault("SMDEBUG_TRAINING_END_DELAY_REFRESH", "0")

import smdebug_cpp.dask as sd  # noqa: E402
from s3rver_support import BUCKET, s3rver_environment  # noqa: E402
from smdebug_cpp.trials import create_trial  # noqa: E402

CASES = Path(__file__).resolve().parents[1] / "data" / "conformance" / "cases"
PT = str(CASES / "pt_train_eval" / "trial")
MULTI = str(CASES / "multiworker_incomplete" / "trial")


def expected_reductions(path, reduction, abs=False, steps=None):
    """The single-process answer: every (step, tensor, worker) the package's Trial lists (at `steps`
    only, when given: each must be one of the Trial's complete steps)."""
    trial = create_trial(path)
    rows = []
    complete = trial.steps()
    if steps is not None:
        assert set(steps) <= set(complete), "a step dask returned is not complete for the single-process package"
    for step in complete if steps is None else sorted(steps):
        for name in trial.tensor_names(step=step):
            tensor = trial.tensor(name)
            for worker in tensor.workers(step):
                try:
                    v = tensor.reduction_value(step, reduction, worker=worker, abs=abs)
                except Exception as e:  # neither the reduction nor the value saved at this step
                    if type(e).__name__ != "TensorUnavailableForStep":
                        raise
                    continue
                rows.append((worker, trial.mode(step).name, step, trial.mode_step(step), name, float(np.ravel(v)[0])))
    return pd.DataFrame(rows, columns=sd.COLUMNS)


def normalised(df):
    return df.sort_values(["step", "tensor", "worker"]).reset_index(drop=True)


def assert_frames_equal(got, want):
    assert list(got.columns) == sd.COLUMNS
    assert got["value"].dtype == np.float64
    pd.testing.assert_frame_equal(normalised(got), normalised(want), check_dtype=False)


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with Client(cluster) as c:
            yield c


@pytest.mark.parametrize("path,reduction,abs_", [(PT, "mean", False), (MULTI, "l2", False), (MULTI, "max", True)])
def test_reductions_equal_the_single_process_package(client, path, reduction, abs_):
    df = sd.reductions(path, reduction, abs=abs_, partition_steps=3)
    assert df.npartitions >= 5
    got = df.compute()
    want = expected_reductions(path, reduction, abs_)
    assert len(want) > 50
    assert_frames_equal(got, want)


def test_reductions_select_tensors_collection_mode_steps_workers(client):
    want = expected_reductions(MULTI, "mean")
    trial = create_trial(MULTI)
    weights = set(trial.tensor_names(collection="weights"))
    got = sd.reductions(MULTI, collection="weights", mode="TRAIN", steps=range(2, 9), workers=["worker_1"],
                        partition_steps=2, partition_workers=1).compute()
    sel = want[want.tensor.isin(weights) & (want["mode"] == "TRAIN") & want.step.between(2, 8) & (want.worker == "worker_1")]
    assert len(sel) > 3
    assert_frames_equal(got, sel)
    got = sd.reductions(MULTI, tensors=["loss"], partition_workers=2).compute()
    assert_frames_equal(got, want[want.tensor == "loss"])
    with pytest.raises(ValueError, match="worker_9"):
        sd.reductions(MULTI, workers=["worker_9"])
    with pytest.raises(ValueError, match="mode"):
        sd.reductions(MULTI, mode="TRAINING")
    with pytest.raises(ValueError, match="partition_steps"):
        sd.reductions(MULTI, partition_steps=0)


def test_values_stack_steps_in_step_chunks(client):
    trial = create_trial(PT)
    t = trial.tensor("MLP_fc1.weight")
    arr = sd.values(PT, "MLP_fc1.weight", partition_steps=2)
    steps = t.steps()
    assert arr.shape == (len(steps), 12, 6) and arr.dtype == np.float32
    assert arr.chunks[0] == tuple(min(2, len(steps) - i) for i in range(0, len(steps), 2))
    np.testing.assert_array_equal(arr.compute(), np.stack([t.value(s) for s in steps]))
    train = sd.values(PT, "MLP_fc1.weight", mode="TRAIN").compute()
    train_steps = [s for s in steps if trial.mode(s).name == "TRAIN"]
    np.testing.assert_array_equal(train, np.stack([t.value(s) for s in train_steps]))
    loss = sd.values(MULTI, "loss", worker="worker_2").compute()
    lt = create_trial(MULTI).tensor("loss")
    np.testing.assert_array_equal(loss, np.stack([lt.value(s, worker="worker_2") for s in lt.steps()
                                                  if "worker_2" in lt.workers(s)]))


def test_values_of_a_tensor_whose_shape_changes_raise(tmp_path):
    # `loss` is () in ongoing_no_end and (1,) in multiworker_incomplete: one step of worker_0 of the
    # second spliced into a copy of the first gives a trial whose `loss` changes shape at that step.
    base, other = CASES / "ongoing_no_end" / "trial", CASES / "multiworker_incomplete" / "trial"
    spliced = tmp_path / "spliced"
    shutil.copytree(base, spliced)
    step = 1
    for rel in (f"events/{step:012d}/{step:012d}_worker_0.tfevents", f"index/000000000/{step:012d}_worker_0.json"):
        assert (spliced / rel).exists()
        shutil.copy(other / rel, spliced / rel)
    with pytest.raises(ValueError, match=r"loss.*shape \(\).*\(1,\)|loss.*shape \(1,\).*\(\)"):
        sd.values(str(spliced), "loss", worker="worker_0")


def cli_first_firing(path, rule, *params):
    cmd = [os.environ["SMDEBUG_CLI"], "rule", rule, path] + [a for p in params for a in ("--param", p)]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert out.returncode in (0, 1), out.stderr
    lines = [line for line in out.stdout.splitlines() if line.startswith("step ")]
    if not lines:
        return None
    # one line per step: `step <g> [(<MODE> step <m>)] <first finding>[ (and N more tensors: ...)]`
    m = re.fullmatch(r"step (\d+)(?: \((?:TRAIN|EVAL|PREDICT) step \d+\))? (.*?)(?: \(and \d+ more (?:tensor|finding)s?: .*\))?", lines[0])
    assert m, lines[0]
    return {"step": int(m.group(1)), "message": m.group(2)}


@pytest.mark.parametrize("rule,params", [
    ("VanishingGradient", {"threshold": 0.005}),
    ("AllZero", {"collection_names": ["gradients"], "threshold": 20}),
    ("ExplodingTensor", {}),
])
def test_find_first_equals_the_single_process_rule(client, rule, params):
    text = [f"{k}={','.join(v) if isinstance(v, list) else v}" for k, v in params.items()]
    want = cli_first_firing(PT, rule, *text)
    got = sd.find_first(PT, rule, params, partition_steps=2)
    assert got == want
    if rule == "VanishingGradient":
        assert got["step"] == 6  # not the first partition's: the partitions before it found nothing
    if rule == "ExplodingTensor":
        assert got is None
    later = sd.find_first(PT, "vanishinggradient", {"threshold": 0.01}, start_step=4, partition_steps=3)
    assert later["step"] == 6  # fires at 0, 3 and 6


def test_find_first_refuses_rules_with_history(client):
    with pytest.raises(ValueError, match="LossNotDecreasing.*step-local|step-local.*LossNotDecreasing"):
        sd.find_first(PT, "LossNotDecreasing")
    with pytest.raises(ValueError, match="NoSuchRule"):
        sd.find_first(PT, "NoSuchRule")


def test_a_killed_dask_worker_loses_nothing(client):
    from distributed import Event, wait

    want = expected_reductions(MULTI, "mean")
    gate = Event("smdebug-dask-gate", client=client)
    gate.clear()

    def held(frame, name=gate.name):
        from distributed import Event

        assert Event(name).wait(timeout=60)
        return frame

    df = sd.reductions(MULTI, "mean", partition_steps=1)
    held_df = df.map_partitions(held, meta=df._meta)
    future = client.compute(held_df)
    deadline = time.time() + 30
    while sum(1 for tasks in client.processing().values() if tasks) < 2:  # both workers are busy
        assert time.time() < deadline, "the workers never started"
        time.sleep(0.05)
    pids = client.run(os.getpid)
    victim = sorted(pids)[0]
    os.kill(pids[victim], signal.SIGKILL)
    time.sleep(0.5)
    gate.set()
    wait(future, timeout=60)
    assert_frames_equal(future.result(), want)
    client.wait_for_workers(2, timeout=30)
    assert pids[victim] not in client.run(os.getpid).values()  # the nanny started a new worker process


def test_a_trial_being_written_is_read_up_to_its_complete_steps(client, tmp_path):
    out = tmp_path / "running"
    writer = subprocess.Popen([os.environ["SMDEBUG_CRASH_WRITER"], str(out), "100000"], stdout=subprocess.PIPE,
                              text=True)
    try:
        for line in writer.stdout:
            if line.strip() == "durable 12":
                break
        df = sd.reductions(str(out), "mean", partition_steps=4)
        got = df.compute()
        steps = sorted(got.step.unique())
        assert len(steps) >= 12 and steps == list(range(len(steps)))
        assert writer.poll() is None, "the writer was still writing"
        counter = got[got.tensor == "counter"].set_index("step")["value"]
        assert list(counter) == [float(s) for s in steps]
        weight = got[got.tensor == "weight"].set_index("step")["value"]
        np.testing.assert_allclose(weight.values, [s * 10000 + 2047.5 for s in steps], rtol=1e-6)
        # The single-process package, opened after dask planned, has these steps complete and the same rows.
        assert_frames_equal(got, expected_reductions(str(out), "mean", steps=steps))
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait()


def workers_stopping_early(tmp_path, ended):
    """MULTI (3 workers, steps 0-14) with worker_1 and worker_2 stopped after step 11: steps 12-14
    are worker_0's only. With the end marker (`ended`) they are complete; without it, not yet."""
    trial = tmp_path / ("ended" if ended else "live")
    shutil.copytree(MULTI, trial)
    for step in (12, 13, 14):
        for worker in ("worker_1", "worker_2"):
            (trial / f"events/{step:012d}/{step:012d}_{worker}.tfevents").unlink()
            (trial / f"index/000000000/{step:012d}_{worker}.json").unlink()
    if not ended:
        (trial / "training_job_end.ts").unlink()
    return str(trial)


def test_workers_that_stop_early_finished_trial_keeps_the_last_steps(client, tmp_path):
    path = workers_stopping_early(tmp_path, ended=True)
    assert create_trial(path).steps()[-3:] == [12, 13, 14]  # the single-process answer
    want = expected_reductions(path, "mean")
    assert set(want.step) >= {12, 13, 14}
    got = sd.reductions(path, "mean", partition_steps=4).compute()
    assert_frames_equal(got, want)
    lt = create_trial(path).tensor("loss")
    want_loss = np.stack([lt.value(s, worker="worker_0") for s in lt.steps() if "worker_0" in lt.workers(s)])
    np.testing.assert_array_equal(sd.values(path, "loss", worker="worker_0").compute(), want_loss)
    assert 12 in lt.steps()  # worker_0 alone wrote it


def test_workers_that_stop_early_live_trial_stops_at_the_last_complete_step(client, tmp_path):
    path = workers_stopping_early(tmp_path, ended=False)
    single = create_trial(path).steps()
    assert len(single) >= 10 and max(single) < 12  # 12-14 are worker_0's only and training has not ended
    got = sd.reductions(path, "mean", partition_steps=4).compute()
    assert sorted(got.step.unique()) == single
    assert_frames_equal(got, expected_reductions(path, "mean"))


@pytest.fixture
def s3rver_trial():
    with s3rver_environment() as upload:
        url = f"s3://{BUCKET}/dask-{os.getpid()}/multi"
        upload(MULTI, url)
        yield url


def test_s3rver_trial_equals_the_local_one(s3rver_trial):
    # A cluster started after the AWS environment is set: its workers sign their own requests.
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as c:
        df = sd.reductions(s3rver_trial, "max", partition_steps=4)
        assert "S3RVER" not in repr(dict(df.__dask_graph__()))  # no credentials in the graph
        assert_frames_equal(c.compute(df).result(), expected_reductions(MULTI, "max"))
        assert_frames_equal(df.compute(), expected_reductions(s3rver_trial, "max"))
        arr = c.compute(sd.values(s3rver_trial, "dense/kernel:0", worker="worker_0", partition_steps=5)).result()
        t = create_trial(MULTI).tensor("dense/kernel:0")
        np.testing.assert_array_equal(arr, np.stack([t.value(s, worker="worker_0") for s in t.steps()
                                                     if "worker_0" in t.workers(s)]))


def test_diff_one_baseline_against_many_runs(tmp_path):
    """sd.diff: one row per run, the first difference as smdebug_cpp.analysis.diff says it (step null
    when the run matches). Trials from tests/analysis/make_analysis_trials.cpp (SMDEBUG_ANALYSIS_TRIALS)."""
    from distributed import Client, LocalCluster

    from smdebug_cpp.analysis import diff as analysis_diff

    program = os.environ.get("SMDEBUG_ANALYSIS_TRIALS")
    assert program and os.path.exists(program), "SMDEBUG_ANALYSIS_TRIALS must name make_analysis_trials"
    subprocess.run([program, str(tmp_path)], check=True)
    base = str(tmp_path / "clean")
    runs = [str(tmp_path / "clean_b"), str(tmp_path / "parted"), str(tmp_path / "inf")]
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, Client(cluster):
        df = sd.diff(base, runs)
    assert list(df.columns) == sd.DIFF_COLUMNS
    assert list(df["run"]) == runs
    assert pd.isna(df.loc[0, "step"]) and pd.isna(df.loc[0, "tensor"])
    assert (df.loc[1, "step"], df.loc[1, "mode"], df.loc[1, "tensor"]) == (10, "TRAIN", "fc2.weight")
    want = analysis_diff(base, runs[2])["first_difference"]
    assert (df.loc[2, "step"], df.loc[2, "tensor"]) == (want["step"], want["tensor"])
    assert df.loc[1, "max_abs"] == pytest.approx(analysis_diff(base, runs[1])["first_difference"]["max_abs"])
