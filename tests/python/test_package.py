"""The Python package smdebug_cpp: conformance through Python (every vendored query), numpy values
that share memory with the C++ library, exceptions and bad arguments, Python and built-in rules, a
trial read while it is written, threads, and S3 through s3rver.

Environment (set by tests/cmake/python.cmake): SMDEBUG_CRASH_WRITER (a Hook writing steps),
SMDEBUG_S3RVER_ENDPOINT (tests/s3rver/run-with-s3rver.sh). A missing tool fails the test.
"""
import enum
import gc
import io
import logging
import math
import os
import re
import shutil
import subprocess
import threading
import time
import tracemalloc
import uuid
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("SMDEBUG_TRAINING_END_DELAY_REFRESH", "0")

import smdebug_cpp  # noqa: E402
from smdebug_cpp import exceptions as ex  # noqa: E402
from smdebug_cpp import modes  # noqa: E402
from smdebug_cpp.analysis.utils import no_refresh, refresh  # noqa: E402
from smdebug_cpp.core.tensor import StepState  # noqa: E402
from smdebug_cpp.rules import ExplodingTensor, Rule, invoke_rule, make_rule  # noqa: E402
from smdebug_cpp.trials import LocalTrial, S3Trial, create_trial  # noqa: E402

import conformance  # noqa: E402
from s3rver_support import BUCKET, s3rver_environment  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
CASES = REPO / "tests" / "data" / "conformance" / "cases"
PT = str(CASES / "pt_train_eval" / "trial")
ZOO = str(CASES / "dtype_zoo" / "trial")
MULTI = str(CASES / "multiworker_incomplete" / "trial")
ONGOING = str(CASES / "ongoing_no_end" / "trial")


def tool(var):
    path = os.environ.get(var)
    assert path and os.access(path, os.X_OK), f"{var} must name the built tool (tests/cmake/python.cmake sets it)"
    return path


@pytest.fixture(scope="module")
def written_trial(tmp_path_factory):
    """A finished trial of 200 steps from the C++ Hook: weight (4096 float32), bias, counter."""
    out = tmp_path_factory.mktemp("written") / "trial"
    subprocess.run([tool("SMDEBUG_CRASH_WRITER"), str(out), "200"], check=True, stdout=subprocess.DEVNULL)
    return str(out)


def weights(step):
    return (step * 10000 + np.arange(4096)).astype(np.float32)


# ---- the package ---------------------------------------------------------------------------------

def test_version_comes_from_the_version_file():
    assert smdebug_cpp.__version__ == (REPO / "VERSION").read_text().strip()


def test_conformance_every_query_through_python():
    out = io.StringIO()
    totals = conformance.run(str(CASES), out=out)
    assert totals.failed == 0, out.getvalue()[:4000]
    assert totals.passed == 16926
    assert sum(n for _, n in totals.per_deviation.values()) > 7000


def test_create_trial_types_and_identity():
    t = create_trial(PT)
    assert isinstance(t, LocalTrial) and t.name == "trial"
    assert create_trial(PT, name="x").name == "x"
    assert t == create_trial(PT) and hash(t) == hash(create_trial(PT))
    assert t.tensor(t.tensor_names()[0]) is t.tensor(t.tensor_names()[0])


def test_last_index_token_is_smdebugs():
    t = create_trial(PT)
    last = t.steps()[-1]
    assert t.last_complete_step == last
    assert t.last_index_token == os.path.join(PT, "index/000000000/%012d_worker_0.json" % last)
    assert t.index_listing_position is not None
    assert t.path == PT


def test_refresh_policy_and_reference_token_are_the_librarys(tmp_path, monkeypatch):
    """maybe_refresh() is Trial::maybe_refresh (off with dynamic_refresh off; the end of training
    loads every step), and last_index_token is built from the library's reference_index_key."""
    monkeypatch.setenv("SMDEBUG_TRAINING_END_DELAY_REFRESH", "0")
    folder = tmp_path / "grows"
    _index_only_trial(folder, {0: [0, 1], 1: [0, 1]}, 2, False)
    t = create_trial(str(folder))
    assert t.steps() == [0, 1] and t._core.reference_index_key == "index/000000000/000000000001_worker_1.json"
    _index_only_trial(folder, {2: [0, 1]}, 2, False)
    t.dynamic_refresh = False
    before = t.refresh_stats()["refreshes"]
    t.maybe_refresh()
    assert t.refresh_stats()["refreshes"] == before  # switched off: no refresh
    t.dynamic_refresh = True
    t.maybe_refresh()
    assert t.steps(show_incomplete_steps=True)[-1] == 2 and t.loaded_all_steps is False
    assert t.last_index_token == os.path.join(str(folder), "index/000000000/000000000002_worker_1.json")
    (folder / "training_job_end.ts").write_text("")
    t.maybe_refresh()
    assert t.loaded_all_steps is True
    empty = tmp_path / "empty"
    _index_only_trial(empty, {0: [0]}, 2, False)  # step 0 incomplete: no token yet
    e = create_trial(str(empty))
    assert e._core.reference_index_key is None and e.last_index_token is None


def test_planned_steps_and_reduction_rows_select_modes_and_collections_in_the_library():
    """_core.planned_steps(path, mode, steps) and Trial.reduction_rows(mode=, collection=) give what
    selecting in Python from trial.mode(step) and tensor_names(collection=) gives."""
    from smdebug_cpp import _core

    t = create_trial(PT)
    all_steps, workers = _core.planned_steps(PT)
    assert all_steps == t.steps() and workers == sorted(t.workers())
    for mode in (modes.TRAIN, modes.EVAL):
        expected = [s for s in t.steps() if t.mode(s) == mode]
        assert expected and _core.planned_steps(PT, mode.name)[0] == expected
        assert _core.planned_steps(PT, mode.name, expected[1:2] + [10**9])[0] == expected[1:2]
    assert _core.planned_steps(PT, "GLOBAL", [])[0] == []
    with pytest.raises(ex.UsageError, match="SIDEWAYS"):
        _core.planned_steps(PT, "SIDEWAYS")
    steps = t.steps()
    eval_rows = t.reduction_rows(steps, "max", mode=modes.EVAL)
    assert len(eval_rows["step"]) > 0
    assert set(eval_rows["step"].tolist()) == {s for s in steps if t.mode(s) == modes.EVAL}
    assert set(eval_rows["mode"]) == {"EVAL"}
    name = next(n for n, c in t.collections().items() if t.tensor_names(collection=n))
    rows = t.reduction_rows(steps[:3], "max", collection=name)
    assert set(rows["tensor"]) == {n for s in steps[:3] for n in t.tensor_names(step=s, collection=name)}
    both = t.reduction_rows(steps[:3], "max", collection=name, tensors=sorted(rows["tensor"])[:1])
    assert set(both["tensor"]) == set(sorted(rows["tensor"])[:1])
    # A name the trial lacks selects no tensor, as tensor_names(collection=) of it answers [].
    assert t.tensor_names(collection="no-such-collection") == []
    assert len(t.reduction_rows(steps[:3], "max", collection="no-such-collection")["step"]) == 0


def test_last_step_and_range_steps_open_only_what_they_ask(tmp_path):
    full = create_trial(PT)
    assert full.last_step() == full.steps()[-1]
    ranged = create_trial(PT, range_steps=(3, 7))
    assert ranged.steps() == [s for s in full.steps() if 3 <= s < 7]
    assert ranged.refresh_stats()["index_files_read"] == len(ranged.steps())
    assert ranged.last_step() == full.steps()[-1]  # the store's newest step, whatever the range
    empty = tmp_path / "empty"  # the job's collections written, no step yet
    shutil.copytree(Path(PT) / "collections", empty / "collections")
    assert create_trial(str(empty)).last_step() is None


def test_read_values_reads_many_tensors_at_many_steps_as_value_does():
    t = create_trial(PT)
    names = t.tensor_names()[:3]
    wanted = {n: t.tensor(n).steps()[:4] for n in names}
    got = t.read_values(wanted)
    assert sorted(got) == sorted(names)
    for n, steps in wanted.items():
        assert sorted(got[n]) == sorted(steps)
        for s in steps:
            np.testing.assert_array_equal(got[n][s], t.tensor(n).value(s))
    with pytest.raises(ex.TensorUnavailable):
        t.read_values({"no/such/tensor": [0]})
    with pytest.raises(TypeError):
        t.read_values([("x", [0])])


def test_modes_accept_our_members_names_and_foreign_modekeys():
    class ForeignModeKeys(enum.Enum):  # what smdebug.modes.ModeKeys looks like
        TRAIN = 1
        EVAL = 2
        PREDICT = 3
        GLOBAL = 4

    t = create_trial(PT)
    want = t.steps(mode=modes.TRAIN)
    assert want and want == t.steps(mode=ForeignModeKeys.TRAIN) == t.steps(mode="TRAIN")
    assert t.steps(mode=modes.EVAL) == t.steps(mode=ForeignModeKeys.EVAL)
    assert modes.TRAIN is smdebug_cpp.modes.ModeKeys.TRAIN
    g = t.steps()[0]
    assert t.mode(g) in (modes.TRAIN, modes.EVAL, modes.PREDICT)
    assert t.global_step(t.mode(g), t.mode_step(g)) == g
    # value() and reduction_value() read their arguments in C++: the same answers for every spelling.
    name = t.tensor_names(step=g)[0]
    ten, ms = t.tensor(name), t.mode_step(g)
    want = ten.value(g)
    for step, mode in [(np.int64(g), modes.GLOBAL), (g, ForeignModeKeys.GLOBAL), (g, "global"), (g, None),
                       (ms, t.mode(g)), (np.int32(ms), ForeignModeKeys[t.mode(g).name]), (ms, t.mode(g).name.lower())]:
        assert np.array_equal(ten.value(step, mode=mode), want)
        assert ten.reduction_value(step, "max", mode=mode) == want.max()
        assert ten.reduction_value(step, "min", mode, None, np.bool_(True)) == np.abs(want).min()
    worker = ten.workers(g)[0]
    assert np.array_equal(ten.value(g, modes.GLOBAL, worker), want)
    assert t.has_passed_step(g) is StepState.AVAILABLE


def reference_enums():
    """(ModeKeys, StepState) of the Python smdebug when it is importable, and always stand-ins
    defined as it defines them (plain Enums: TRAIN=1 .. GLOBAL=4; UNAVAILABLE=0 .. NOT_YET_AVAILABLE=2)."""
    class ModeKeys(enum.Enum):
        TRAIN = 1
        EVAL = 2
        PREDICT = 3
        GLOBAL = 4

    class StepState(enum.Enum):
        UNAVAILABLE = 0
        AVAILABLE = 1
        NOT_YET_AVAILABLE = 2

    found = [(ModeKeys, StepState)]
    try:
        from smdebug.core.modes import ModeKeys as RefModeKeys
        from smdebug.core.tensor import StepState as RefStepState
        found.append((RefModeKeys, RefStepState))
    except ImportError:
        pass
    return found


@pytest.mark.parametrize("ref_modes,ref_states", reference_enums())
def test_returned_enums_equal_the_python_smdebugs(ref_modes, ref_states):
    t = create_trial(PT)
    g = t.steps()[0]
    assert t.mode(g) == ref_modes[t.mode(g).name] and ref_modes[t.mode(g).name] == t.mode(g)
    assert t.mode(g) != ref_modes.PREDICT and not (t.mode(g) == ref_modes.PREDICT)
    assert modes.TRAIN == ref_modes.TRAIN and modes.GLOBAL != ref_modes.TRAIN
    assert t.mode(g) in {ref_modes[t.mode(g).name]} and {modes.EVAL: 1}[ref_modes.EVAL] == 1
    assert t.has_passed_step(g) == ref_states.AVAILABLE and ref_states.AVAILABLE == t.has_passed_step(g)
    assert t.has_passed_step(g) != ref_states.UNAVAILABLE
    assert t.has_passed_step(10**6) == ref_states.UNAVAILABLE  # the trial has ended
    mode = ref_modes[t.mode(g).name]  # what code importing smdebug.modes holds
    assert mode in t.modes() and t.mode_modestep(g) == (mode, t.mode_step(g))
    assert t.steps(mode=mode) == t.steps(mode=t.mode(g)) and g in [t.global_step(mode, s) for s in t.steps(mode=mode)]
    name = t.tensor_names(step=g)[0]
    assert np.array_equal(t.tensor(name).value(t.mode_step(g), mode=mode), t.tensor(name).value(g))
    assert StepState.AVAILABLE != ref_modes.TRAIN  # same value, another enum
    assert modes.TRAIN != 1  # not an int: as the reference's members


def test_collections_are_smdebug_shaped():
    t = create_trial(PT)
    cs = t.collections()
    assert cs and all(c.name == n for n, c in cs.items())
    some = next(c for c in cs.values() if c.tensor_names)
    assert isinstance(some.tensor_names, set)
    assert t.tensor_names(collection=some.name) == sorted(n for n in some.tensor_names if t.has_tensor(n))
    # As smdebug: collections are the trial's mutable objects; a new name makes an empty one.
    assert t.collection(some.name) is t.collections()[some.name]
    assert t.tensor_names(collection="no_such_collection") == []
    assert "no_such_collection" in t.collections()
    mine = t.collection("mine")
    first, second = t.tensor_names()[:2]
    mine.add_tensor_name(first)
    assert t.tensor_names(collection="mine") == [first]
    mine.include("^" + second.replace(".", "\\.") + "$")
    assert t.tensor_names(collection=mine) == sorted([first, second])
    # Membership is the library's rule (a listed name, or re.search of an include_regex), per step and mode.
    g = t.steps()[0]
    at_g = t.tensor_names(step=g)
    part = at_g[-1][1:4]  # a pattern that matches inside a name, not at its start
    searched = t.collection("searched")
    searched.include(re.escape(part))
    want = sorted(n for n in at_g if re.search(re.escape(part), n))
    assert at_g[-1] in want and t.tensor_names(step=g, collection="searched") == want
    searched.add_tensor_name(at_g[0])
    assert t.tensor_names(step=g, collection=searched) == sorted(set(want) | {at_g[0]})
    ms, mode = t.mode_step(g), t.mode(g)
    assert t.tensor_names(step=ms, mode=mode, collection=searched) == sorted(set(want) | {at_g[0]})
    searched.add_tensor_name("never_saved")  # listed but not in the trial: not returned
    assert "never_saved" not in t.tensor_names(collection=searched)
    some.tensor_names = set()
    some.include_regex = []
    assert t.tensor_names(collection=some.name) == []
    with pytest.raises(ValueError):
        t.tensor_names(collection=mine, regex="a")


def test_collections_come_in_file_order_and_print_as_smdebugs():
    import json

    for path in (PT, MULTI):
        first_file = sorted(Path(path).glob("collections/*/*_collections.json"))[0]
        in_file = list(json.loads(first_file.read_text())["collections"])
        assert in_file != sorted(in_file)  # the case tests an order a sorted map would lose
        assert list(create_trial(path).collections()) == in_file
    weights = create_trial(PT).collection("weights")
    assert repr(weights.reduction_config) == ("<class ReductionConfig: reductions=[], abs_reductions=[], norms=[], "
                                              "abs_norms=[]>, save_shape=False, save_raw_tensor=True")
    train = weights.save_config.get_save_config(modes.TRAIN)
    assert repr(train) == "<class SaveConfig: save_interval=3, save_steps=[], start_step=0, end_step=None>"


# ---- values ---------------------------------------------------------------------------------------

def test_values_are_zero_copy_read_only_and_outlive_the_trial(written_trial):
    t = create_trial(written_trial)
    assert t.steps() == list(range(200))
    v = t.tensor("weight").value(7)
    assert v.dtype == np.float32 and v.shape == (4096,)
    np.testing.assert_array_equal(v, weights(7))
    assert not v.flags.writeable and not v.flags.owndata
    assert type(v.base).__name__ == "PyCapsule"  # the C++ buffer's owner, not a numpy copy
    with pytest.raises(ValueError):
        v[0] = 1
    values = t.tensor("weight").values()
    assert sorted(values) == list(range(200))
    assert all(not a.flags.owndata for a in values.values())
    del t
    gc.collect()
    np.testing.assert_array_equal(v, weights(7))
    np.testing.assert_array_equal(values[199], weights(199))


def test_a_changed_value_in_a_hook_written_trial_raises_naming_the_tensor(written_trial, tmp_path):
    # Issue 46 §9: the C++ Hook's index entries carry the payload's CRC-32C; smdebug's TFRecord
    # footer is a constant, so nothing else sees one bit of a stored float change.
    trial = tmp_path / "copy"
    shutil.copytree(written_trial, trial)
    event = trial / "events" / "000000000007" / "000000000007_worker_0.tfevents"
    data = bytearray(event.read_bytes())
    at = data.find(weights(7)[:1].tobytes())
    assert at >= 0
    data[at] ^= 1
    event.write_bytes(bytes(data))
    t = create_trial(str(trial))
    with pytest.raises(ex.PayloadChecksumMismatch, match=r"tensor 'weight' at step 7: .*000000000007_worker_0\.tfevents") as e:
        t.tensor("weight").value(7)
    assert isinstance(e.value, ex.FormatError)
    np.testing.assert_array_equal(t.tensor("weight").value(6), weights(6))
    out = subprocess.run([tool("SMDEBUG_CLI"), "verify", str(trial)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 1 and "tensor weight" in out.stderr and "payload checksums " in out.stdout


def test_reading_values_allocates_no_copy_of_their_bytes(written_trial):
    t = create_trial(written_trial)
    tensor = t.tensor("weight")
    tensor.value(0)  # warm up: imports and first index read
    tracemalloc.start()
    try:
        kept = [tensor.value(s) for s in range(1, 101)]
        current, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    data_bytes = sum(a.nbytes for a in kept)
    assert data_bytes == 100 * 4096 * 4
    # numpy reports its allocations to tracemalloc: a copied array would show its 16 KiB here
    assert current < data_bytes / 10, (current, data_bytes)


def test_dtypes_shapes_and_strings():
    t = create_trial(ZOO)
    assert t.tensor("f16/vec").value(0).dtype == np.float16
    assert t.tensor("i16/vec").value(0).dtype == np.int16  # D2: the stored dtype
    assert t.tensor("f32/mat").value(0).ndim == 2
    assert t.tensor("scalar/f32_0d").value(0).shape == ()
    labels = t.tensor("str/labels").value(0)
    assert labels.dtype.kind == "U" and all(isinstance(x, str) for x in labels.tolist())
    empty = t.tensor("empty/f64_2x0").value(0)
    assert empty.shape == (2, 0) and empty.size == 0
    assert t.tensor("f32/mat").shape(0) == t.tensor("f32/mat").value(0).shape


def test_reductions_are_float64_and_match_numpy():
    t = create_trial(ZOO)
    x = t.tensor("f32/mat").value(0).astype(np.float64)
    r = t.tensor("f32/mat").reduction_value(0, "mean")
    assert isinstance(r, np.float64)
    assert r == pytest.approx(x.mean(), rel=1e-12)
    assert t.tensor("f32/mat").reduction_value(0, "max", abs=True) == pytest.approx(np.abs(x).max())
    assert t.tensor("f32/mat").reduction_value(0, "l2") == pytest.approx(np.sqrt((x * x).sum()))


def test_reduction_rows_equal_reduction_value_one_by_one():
    t = create_trial(MULTI)
    steps = t.steps(show_incomplete_steps=True)
    rows = t.reduction_rows(steps, "max", abs=True)
    want = []
    for s in steps:
        for name in t.tensor_names(step=s):
            for w in sorted(t.tensor(name).workers(s)):
                try:
                    want.append((s, name, w, float(t.tensor(name).reduction_value(s, "max", worker=w, abs=True))))
                except ex.TensorUnavailableForStep:
                    pass
    assert len(want) > 20
    got = list(zip(rows["step"].tolist(), rows["tensor"], rows["worker"], rows["value"].tolist()))
    assert got == want
    assert rows["value"].dtype == np.float64
    assert set(rows["mode"]) <= {"TRAIN", "EVAL", "PREDICT", "GLOBAL"}
    only = t.reduction_rows(steps, "max", abs=True, tensors=[want[0][1]], workers=want[0][2])
    assert set(only["tensor"]) == {want[0][1]} and set(only["worker"]) == {want[0][2]}
    with pytest.raises(ex.SMDebugValueError):
        t.reduction_rows(steps, "median")


# ---- exceptions and bad arguments ---------------------------------------------------------------

def test_exception_hierarchy_is_smdebugs():
    assert issubclass(ex.SMDebugValueError, ValueError) and issubclass(ex.SMDebugValueError, ex.SMDebugError)
    assert issubclass(ex.SMDebugTypeError, TypeError)
    assert issubclass(ex.SMDebugRuntimeError, RuntimeError)
    assert issubclass(ex.SMDebugNotImplementedError, NotImplementedError)
    for name in ("StepNotYetAvailable", "StepUnavailable", "TensorUnavailableForStep", "ShapeUnavailableForStep",
                 "TensorUnavailable", "InvalidWorker", "NoMoreData", "RuleEvaluationConditionMet",
                 "IndexReaderException", "MissingCollectionFiles", "InsufficientInformationForRuleInvocation",
                 "InvalidCollectionConfiguration", "NoMoreProfilerData", "SMDebugCustomerError"):
        assert issubclass(getattr(ex, name), ex.SMDebugError), name
    e = ex.TensorUnavailableForStep("w", 3, modes.TRAIN, True)
    assert (e.tname, e.step, e.mode, e.has_reductions) == ("w", 3, modes.TRAIN, True)


def test_errors_from_the_library_carry_the_reference_attributes():
    t = create_trial(PT)
    name = t.tensor_names()[0]
    with pytest.raises(ex.TensorUnavailable) as e:
        t.tensor("no/such/tensor")
    assert e.value.tname == "no/such/tensor" and "no/such/tensor" in str(e.value)
    with pytest.raises(ex.StepUnavailable) as e:
        t.tensor(name).value(10 ** 6)
    assert e.value.step == 10 ** 6 and e.value.mode is modes.GLOBAL
    with pytest.raises(ex.InvalidWorker) as e:
        t.tensor(name).value(t.tensor(name).steps()[0], worker="worker_99")
    assert e.value.worker == "worker_99"
    with pytest.raises(ex.SMDebugValueError):
        t.tensor(name).reduction_value(t.tensor(name).steps()[0], "median")
    with pytest.raises(ex.StepNotYetAvailable) as e:
        create_trial(ONGOING).tensor(create_trial(ONGOING).tensor_names()[0]).value(10 ** 6)
    assert e.value.step == 10 ** 6
    with pytest.raises(ex.ObjectNotFound) as e:
        create_trial("/nonexistent/trial/folder")
    assert isinstance(e.value, ex.SMDebugError) and "/nonexistent/trial/folder" in str(e.value)


def test_a_path_that_holds_no_trial_fails_at_once_naming_wait_timeout(tmp_path, caplog):
    (tmp_path / "empty").mkdir()
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "README.md").write_text("# not a trial\n")
    for path in [tmp_path / "missing", tmp_path / "empty", docs, Path(PT).parent]:  # the last: a trial's parent
        start = time.monotonic()
        with pytest.raises(ex.ObjectNotFound) as e:
            create_trial(str(path))
        assert time.monotonic() - start < 2
        assert str(path) in str(e.value)
        assert "wait_timeout=SECONDS" in str(e.value) and "wait_for_trial" not in str(e.value)
    with pytest.raises(ex.ObjectNotFound, match=r"it holds trials: trial"):
        create_trial(str(Path(PT).parent))
    with pytest.raises(ValueError, match="wait_timeout"):
        create_trial(str(tmp_path / "empty"), wait_timeout=-1)

    # Asked to wait: one line on the "smdebug_cpp" logger says what for.
    with caplog.at_level(logging.WARNING, logger="smdebug_cpp"):
        with pytest.raises(ex.TimeoutError):
            create_trial(str(tmp_path / "empty"), wait_timeout=0.3)
    said = [r.getMessage() for r in caplog.records if "waiting for the trial" in r.getMessage()]
    assert said == [f"waiting for the trial at {tmp_path / 'empty'}/ to be written (no collections file yet) for up to 300 ms"]

    # The legitimate wait: a job that starts writing after the trial is opened.
    out = tmp_path / "later"
    job = threading.Thread(target=lambda: (time.sleep(0.3), subprocess.run(
        [tool("SMDEBUG_CRASH_WRITER"), str(out), "5"], check=True, stdout=subprocess.DEVNULL)))
    job.start()
    try:
        t = create_trial(str(out), wait_timeout=math.inf)
    finally:
        job.join()
    assert t.tensor("counter").value(4).tolist() == [4]


@pytest.mark.parametrize("call,error,word", [
    (lambda t, n: t.tensor(n).value("3"), TypeError, "step_num"),
    (lambda t, n: t.tensor(n).value(1.5), TypeError, "step_num"),
    (lambda t, n: t.tensor(n).value(0, mode="TRAINING"), ValueError, "mode"),
    (lambda t, n: t.tensor(n).value(0, mode=3), TypeError, "mode"),
    (lambda t, n: t.tensor(n).value(0, worker=0), TypeError, "worker"),
    (lambda t, n: t.tensor(n).reduction_value(0, None), TypeError, "reduction_name"),
    (lambda t, n: t.tensor(n).value(2**70), ValueError, "step_num"),
    (lambda t, n: t.tensor(n).value(True), TypeError, "step_num"),
    (lambda t, n: t.tensor(n).reduction_value(2**70, "mean"), ValueError, "step_num"),
    (lambda t, n: t.tensor(n).reduction_value(0, "mean", mode="x"), ValueError, "mode"),
    (lambda t, n: t.tensor(n).prev_steps(5, n=-1), ValueError, "n"),
    (lambda t, n: t.tensor_names(regex=5), TypeError, "regex"),
    (lambda t, n: t.tensor_names(step="x"), TypeError, "step"),
    (lambda t, n: t.tensor(5), TypeError, "tname"),
    (lambda t, n: t.wait_for_steps(3), TypeError, "required_steps"),
    (lambda t, n: t.wait_for_steps([1], timeout=-1), ValueError, "timeout"),
    (lambda t, n: create_trial(123), TypeError, "path"),
    (lambda t, n: create_trial(PT, range_steps=(5, 2)), ValueError, "range_steps"),
    (lambda t, n: create_trial(PT, range_steps=5), ValueError, "range_steps"),
    (lambda t, n: create_trial(PT, max_expanded_elements=0), ValueError, "max_expanded_elements"),
    (lambda t, n: create_trial(PT, max_expanded_elements="lots"), ValueError, "max_expanded_elements"),
    (lambda t, n: t.tensor_names(regex="(unclosed"), ex.SMDebugValueError, "unclosed"),
    (lambda t, n: make_rule("NoSuchRule", t), ex.UnknownRule, "NoSuchRule"),
    (lambda t, n: make_rule("ExplodingTensor", t, only_nan="maybe"), ValueError, "only_nan"),
    (lambda t, n: make_rule("ExplodingTensor", t, no_such_param=1), ValueError, "no_such_param"),
])
def test_bad_arguments_are_typed_errors_naming_the_argument(call, error, word):
    t = create_trial(PT)
    with pytest.raises(error) as e:
        call(t, t.tensor_names()[0])
    assert word.lower() in str(e.value).lower()


def test_the_expansion_budget_is_a_trial_option_not_process_state():
    """max_expanded_elements= bounds broadcast records of that trial only (docs/reliability.md); the
    process-wide set_expansion_budget is gone. Records written element by element are not bounded by it."""
    assert not hasattr(smdebug_cpp, "set_expansion_budget")
    t = create_trial(PT, max_expanded_elements=1)
    name = t.tensor_names()[0]
    step = t.tensor(name).steps()[-1]
    np.testing.assert_array_equal(t.tensor(name).value(step), create_trial(PT).tensor(name).value(step))


# ---- rules ------------------------------------------------------------------------------------------

class AnyNonFinite(Rule):
    """A Python rule: fires where a tensor of the regex holds NaN or inf."""

    def __init__(self, base_trial, pattern):
        super().__init__(base_trial, action_str="")
        self.pattern = pattern

    def set_required_tensors(self, step):
        for name in self.base_trial.tensor_names(step=step, regex=self.pattern):
            self.req_tensors.add(name, steps=[step])

    def invoke_at_step(self, step):
        assert not self.base_trial.dynamic_refresh  # invoke() runs it without refreshing
        return any(not np.isfinite(t.value(step).astype(np.float64)).all() for t in self.req_tensors.get())


def expected_nonfinite_steps(trial, pattern):
    out = []
    for s in trial.steps():
        names = trial.tensor_names(step=s, regex=pattern)
        if any(not np.isfinite(trial.tensor(n).value(s).astype(np.float64)).all() for n in names):
            out.append(s)
    return out


def test_python_rule_fires_where_numpy_says(monkeypatch):
    t = create_trial(ZOO)
    want = expected_nonfinite_steps(t, "^(f32|f64|nonfinite)/")
    assert want, "dtype_zoo has non-finite values"
    fired = []
    original = AnyNonFinite.invoke

    def recording_invoke(self, step):
        try:
            original(self, step)
        except ex.RuleEvaluationConditionMet as e:
            fired.append(e.step)
            raise

    monkeypatch.setattr(AnyNonFinite, "invoke", recording_invoke)
    rule = AnyNonFinite(t, "^(f32|f64|nonfinite)/")
    invoke_rule(rule, start_step=0, end_step=max(t.steps()) + 1)
    assert fired == want
    assert t.dynamic_refresh  # no_refresh restored it
    with pytest.raises(ex.RuleEvaluationConditionMet) as e:
        invoke_rule(AnyNonFinite(t, "^(f32|f64|nonfinite)/"), start_step=0, raise_eval_cond=True)
    assert e.value.step == want[0] and e.value.rule_name == "AnyNonFinite"


def test_builtin_rule_equals_the_python_rule():
    t = create_trial(ZOO)
    want = expected_nonfinite_steps(t, "^(f32|f64|nonfinite)/")
    rule = ExplodingTensor(t, tensor_regex=["^f32/", "^f64/", "^nonfinite/"])
    invoke_rule(rule, start_step=0)
    assert sorted({s for s, _, _ in rule.fired}) == want
    assert all(finding == f"tensor {tensor}: " + finding.split(": ", 1)[1] for _, tensor, finding in rule.fired)
    assert make_rule("explodingtensor", t, tensor_regex="^nonfinite/", only_nan=True).rule_name == "ExplodingTensor"
    assert smdebug_cpp.rules.is_step_local_rule("ExplodingTensor")
    assert not smdebug_cpp.rules.is_step_local_rule("LossNotDecreasing")


def test_builtin_rule_findings_name_every_tensor_of_a_step():
    # Issue 46 §5: every tensor that fires at a step, with its message; raise_eval_cond keeps them.
    t = create_trial(ZOO)
    nonfinite = ["nonfinite/all_nan", "nonfinite/f32", "nonfinite/f64"]
    rule = ExplodingTensor(t, tensor_regex="^nonfinite/")
    invoke_rule(rule, start_step=0)
    assert [(s, tensor) for s, tensor, _ in rule.fired] == [(s, n) for s in (0, 1, 3) for n in nonfinite]
    assert all(finding.startswith(f"tensor {tensor}: ") and " at element " in finding for _, tensor, finding in rule.fired)
    raising = ExplodingTensor(t, tensor_regex="^nonfinite/")
    with pytest.raises(ex.RuleEvaluationConditionMet) as e:
        invoke_rule(raising, raise_eval_cond=True)
    assert e.value.step == 0  # the reference's semantics: raised at the first step that fires
    assert raising.fired == rule.fired[:3]
    with pytest.raises(ex.UnknownRule, match="Nope"):
        make_rule("Nope", t)


def test_spec_actions_run_from_python_and_from_builtin_rules(tmp_path):
    """Action(spec) and BuiltinRule(actions=[...]): a local receiver gets the finding's JSON once per
    firing (VanishingGradient with threshold 0.0065 fires at TRAIN steps 3 and 6 of pt_train_eval);
    exec sees the finding in SMDEBUG_*; a bad spec and a failed action are typed errors."""
    import http.server
    import json

    from smdebug_cpp.rules.action import Action

    got = []

    class Receiver(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            got.append((self.path, json.loads(self.rfile.read(int(self.headers["Content-Length"])))))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Receiver)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/hook/SECRET"
        Action("webhook:" + url)("R", 7, "tensor w: nan", mode=modes.ModeKeys.TRAIN, mode_step=3, tensor="w", trial="t1")
        assert len(got) == 1
        body = got[0][1]
        del body["time"]
        assert got[0][0] == "/hook/SECRET"
        assert body == {"rule": "R", "step": 7, "mode": "TRAIN", "mode_step": 3, "tensor": "w",
                        "message": "tensor w: nan", "trial": "t1"}
        got.clear()
        stop = tmp_path / "STOP"
        rule = make_rule("VanishingGradient", create_trial(PT), threshold=0.0065,
                         actions=["webhook:" + url, f"stop-file:{stop}"])
        invoke_rule(rule)
        assert sorted({step for step, _, _ in rule.fired}) == [3, 6]
        assert [b["step"] for _, b in got] == [3, 6]
        assert all(b["mode"] == "TRAIN" and b["tensor"].startswith("gradient/") for _, b in got)
        assert json.loads(stop.read_text())["step"] == 6
    finally:
        server.shutdown()
        server.server_close()
    out = tmp_path / "env.txt"
    Action(f"exec:sh -c 'echo $SMDEBUG_RULE $SMDEBUG_STEP $SMDEBUG_TENSOR > \"$0\"' {out}")("R", 5, "x", tensor="t")
    assert out.read_text() == "R 5 t\n"
    with pytest.raises(ex.InvalidActionSpec) as bad:
        Action("webhook:https://user:SECRET@h/x")
    assert "SECRET" not in str(bad.value)
    with pytest.raises(ex.ActionFailed) as failed:
        Action("webhook:http://127.0.0.1:1/SECRET", timeout=1.0, max_attempts=1)("R", 1)
    assert "SECRET" not in str(failed.value) and "127.0.0.1:1" in str(failed.value)
    assert isinstance(failed.value, ex.SMDebugRuntimeError)


def test_required_tensors_and_refresh_contexts():
    t = create_trial(PT)
    name = t.tensor_names()[0]

    class Reader(Rule):
        def invoke_at_step(self, step):
            return False

    r = Reader(t)
    r.req_tensors.add(name, steps=t.tensor(name).steps()[:2])
    assert [x.name for x in r.req_tensors.get()] == [name]
    r.req_tensors.fetch()
    with pytest.raises(ex.TensorUnavailable):
        r.req_tensors.add("no/such", steps=[0])


def test_required_tensors_fetch_waits_for_the_steps_and_reads_no_value(tmp_path):
    """fetch() waits for the required steps (StepUnavailable / NoMoreData as the reference) and
    leaves reading to the rule: a value whose record is damaged raises only where the rule reads it."""
    import glob

    from smdebug_cpp.core.writer import FileWriter

    folder = tmp_path / "t"
    _index_only_trial(folder, {}, 1, True)
    for step in range(3):
        with FileWriter(str(folder), "worker_0", step=step) as w:
            w.write_tensor(np.full(4, step, np.float32), "w", mode=modes.TRAIN, mode_step=step)
    event = sorted(glob.glob(str(folder / "events" / "*" / "000000000001_*")))[0]
    size = os.path.getsize(event)
    with open(event, "r+b") as f:
        f.write(b"\0" * size)  # step 1's record no longer decodes
    t = create_trial(str(folder))
    assert t.steps() == [0, 1, 2]

    class Reads(Rule):
        reads = True

        def set_required_tensors(self, step):
            self.req_tensors.add("w", steps=[step])

        def invoke_at_step(self, step):
            return self.reads and float(self.base_trial.tensor("w").value(step)[0]) != step

    r = Reads(t)
    r.reads = False
    r.invoke(1)  # fetch() reads nothing: the damaged record is not touched
    r.reads = True
    r.invoke(0)
    with pytest.raises(ex.FormatError):
        r.invoke(1)  # the rule's own read sees it
    r.req_tensors.clear()
    r.req_tensors.add("w", steps=[7])
    with pytest.raises((ex.StepUnavailable, ex.NoMoreData)):
        r.req_tensors.fetch()
    with no_refresh(t):
        assert not t.dynamic_refresh
        with refresh([t]):
            assert t.dynamic_refresh
        assert not t.dynamic_refresh
    assert t.dynamic_refresh


# ---- live trials, threads ---------------------------------------------------------------------------

def test_a_trial_being_written_is_read_while_it_grows(tmp_path):
    out = tmp_path / "live"
    writer = subprocess.Popen([tool("SMDEBUG_CRASH_WRITER"), str(out), "300"], stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout.readline().startswith("durable 0")
        t = create_trial(str(out))
        seen = []
        t.wait_for_steps([50], timeout=60)
        for s in range(0, 300):
            t.wait_for_steps([s], timeout=60)
            np.testing.assert_array_equal(t.tensor("weight").value(s), weights(s))
            assert t.tensor("counter").value(s).tolist() == [s]
            seen.append(s)
        assert writer.wait(timeout=60) == 0
        assert seen == list(range(300))
        with pytest.raises(ex.NoMoreData):
            t.wait_for_steps([300], timeout=60)
        assert t.steps() == list(range(300))
    finally:
        writer.kill()
        writer.wait()


def test_threads_share_a_trial_and_the_gil_is_released_while_waiting(written_trial):
    t = create_trial(written_trial)
    errors = []

    def reader(offset):
        try:
            for s in range(offset, 200, 4):
                np.testing.assert_array_equal(t.tensor("weight").value(s), weights(s))
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=reader, args=(i,)) for i in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors

    ongoing = create_trial(ONGOING)
    result = {}

    def waiter():
        try:
            ongoing.wait_for_steps([10 ** 6], timeout=1.0)
        except Exception as e:
            result["error"] = e

    th = threading.Thread(target=waiter)
    spins = 0
    start = time.monotonic()
    th.start()
    while th.is_alive():
        spins += 1
    assert isinstance(result["error"], ex.TimeoutError) and isinstance(result["error"], TimeoutError)
    assert time.monotonic() - start >= 0.9
    assert spins > 10000  # this thread kept running while the other waited in C++


# ---- S3 ------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def s3rver_cases():
    with s3rver_environment() as upload:
        yield f"s3://{BUCKET}/python-{uuid.uuid4().hex[:8]}", upload


def test_conformance_through_s3rver(s3rver_cases):
    base, upload = s3rver_cases
    out = io.StringIO()
    totals = conformance.run(str(CASES), s3_base=base, out=out, upload=upload)
    assert totals.failed == 0, out.getvalue()[:4000]
    assert totals.passed == 16926
    t = create_trial(base + "/pt_train_eval")
    assert isinstance(t, S3Trial) and t.bucket_name == "smdebug-test"
    local = create_trial(PT)
    name = local.tensor_names()[0]
    step = local.tensor(name).steps()[-1]
    np.testing.assert_array_equal(t.tensor(name).value(step), local.tensor(name).value(step))
    # max_concurrency= sets the window of requests in flight; a bad value is a typed error naming it.
    narrow = create_trial(base + "/pt_train_eval", max_concurrency=2)
    np.testing.assert_array_equal(narrow.tensor(name).value(step), local.tensor(name).value(step))
    with pytest.raises(TypeError, match="max_concurrency"):
        create_trial(base + "/pt_train_eval", max_concurrency="many")
    with pytest.raises(ex.SMDebugError, match="max_concurrency"):
        create_trial(base + "/pt_train_eval", max_concurrency=0)


def test_aws_actions_as_the_reference_has_them(monkeypatch, caplog):
    """smdebug.rules.action's modules and classes (the reference's tests/rules/action use them): Actions
    builds StopTrainingAction and MessageAction objects with the reference's attributes; they talk to
    SageMaker and SNS (a local fake of both, through AWS_ENDPOINT_URL_*), keep the answers as boto3
    dicts, and an unreachable service is logged, never raised."""
    import http.server
    import json
    import logging
    import socket
    import urllib.parse

    from smdebug_cpp.rules.action.action import Actions
    from smdebug_cpp.rules.action.message_action import MessageAction
    from smdebug_cpp.rules.action.stop_training_action import StopTrainingAction

    calls = []
    subscribed = []

    class FakeAws(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers["Content-Length"])).decode()
            assert self.headers["Authorization"].startswith("AWS4-HMAC-SHA256 Credential=AKIDTEST/")
            target = self.headers.get("X-Amz-Target")
            if target:  # SageMaker's JSON protocol
                req = json.loads(body)
                calls.append((target, req))
                if target == "SageMaker.ListTrainingJobs":
                    out = {"TrainingJobSummaries": [{"TrainingJobName": "training_prefix-7", "TrainingJobStatus": "InProgress"},
                                                    {"TrainingJobName": "other-job", "TrainingJobStatus": "InProgress"}]}
                else:
                    out = {}
                self.answer(json.dumps(out), "application/x-amz-json-1.1")
                return
            form = dict(urllib.parse.parse_qsl(body))
            calls.append((form["Action"], form))
            arn = "arn:aws:sns:us-east-1:123456789012:SMDebugRules"
            if form["Action"] == "CreateTopic":
                result = f"<TopicArn>{arn}</TopicArn>"
            elif form["Action"] == "ListSubscriptions":
                result = "<Subscriptions>" + "".join(
                    f"<member><Protocol>{p}</Protocol><TopicArn>{arn}</TopicArn><Endpoint>{e}</Endpoint></member>"
                    for p, e in subscribed) + "</Subscriptions>"
            elif form["Action"] == "Subscribe":
                subscribed.append((form["Protocol"], form["Endpoint"]))
                result = "<SubscriptionArn>pending confirmation</SubscriptionArn>"
            else:
                result = "<MessageId>m-1</MessageId>"
            action = form["Action"]
            xml = (f'<{action}Response xmlns="http://sns.amazonaws.com/doc/2010-03-31/"><{action}Result>{result}'
                   f"</{action}Result><ResponseMetadata><RequestId>r-{len(calls)}</RequestId></ResponseMetadata>"
                   f"</{action}Response>")
            self.answer(xml, "text/xml")

        def answer(self, text, content_type):
            data = text.encode()
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FakeAws)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    for k in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDTEST")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "SECRETTEST")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    url = f"http://127.0.0.1:{server.server_address[1]}"
    monkeypatch.setenv("AWS_ENDPOINT_URL_SNS", url)
    monkeypatch.setenv("AWS_ENDPOINT_URL_SAGEMAKER", url)
    try:
        action = Actions(actions_str='[{"name": "stoptraining" , "training_job_prefix":"training_prefix"}, '
                                     '{"name": "email" , "endpoint":"abc@abc.com"}] ', rule_name="test_rule")
        stop_action, email_action = action._actions
        assert isinstance(stop_action, StopTrainingAction) and isinstance(email_action, MessageAction)
        assert stop_action._training_job_prefix == "training_prefix"
        assert stop_action._found_jobs == ["training_prefix-7"]
        assert email_action._protocol == "email"
        assert email_action._topic_name == "SMDebugRules"
        assert email_action._message_endpoint == "abc@abc.com"
        assert email_action._rule_name == "test_rule"
        assert email_action._last_subscription_response["SubscriptionArn"] == "pending confirmation"
        assert email_action._last_subscription_response["ResponseMetadata"]["HTTPStatusCode"] == 200
        assert email_action._last_send_mesg_response is None
        assert [c[0] for c in calls] == ["SageMaker.ListTrainingJobs", "CreateTopic", "ListSubscriptions", "Subscribe"]
        assert calls[0][1]["NameContains"] == "training_prefix" and calls[0][1]["StatusEquals"] == "InProgress"
        assert json.loads(calls[3][1]["Attributes.entry.1.value"]) == {"email": ["abc@abc.com"]}
        del calls[:]
        action.invoke("tensor w: nan")
        assert calls[0] == ("SageMaker.StopTrainingJob", {"TrainingJobName": "training_prefix-7"})
        assert calls[1][0] == "Publish"
        assert calls[1][1]["Message"] == "SMDebugRule:test_rule fired. tensor w: nan"
        assert calls[1][1]["Subject"] == "SMDebugRule:test_rule fired"
        assert email_action._last_send_mesg_response["MessageId"] == "m-1"
        # Subscribed already: no second Subscribe, and the reference's sentence.
        again = MessageAction("test_rule", "email", "abc@abc.com")
        assert again._last_subscription_response.startswith("Subscription exists for topic:arn:aws:sns:")
        assert sum(1 for c in calls if c[0] == "Subscribe") == 0
        # Entries the reference skips.
        assert len(Actions('{"name": "stoptraining" , "invalid_job_prefix":"training_prefix"}', "r")._actions) == 0
        assert len(Actions('[{"name": "invalid" , "invalid":"abc@abc.com"}, {"name": "sms"}, 3]', "r")._actions) == 0
        assert MessageAction("r", "fax", "x")._protocol is None
        with pytest.raises(json.JSONDecodeError):
            Actions("{not json", "r")
    finally:
        server.shutdown()
        server.server_close()
    # Nothing listens: every call fails, each failure is logged, nothing is raised.
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()
    monkeypatch.setenv("AWS_ENDPOINT_URL_SNS", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("AWS_ENDPOINT_URL_SAGEMAKER", f"http://127.0.0.1:{port}")
    with caplog.at_level(logging.INFO, logger="smdebug_cpp"):
        action = Actions('[{"name": "stoptraining" , "training_job_prefix":"p"}, {"name": "sms" , "endpoint":"+11234567890"}]', "r")
        action.invoke()
    stop_action, sms_action = action._actions
    assert stop_action._found_jobs == [] and sms_action._topic_arn is None
    assert sms_action._last_subscription_response is None and sms_action._last_send_mesg_response is None
    assert any("CreateTopic failed" in r.getMessage() for r in caplog.records)
    assert any("SageMaker" in r.getMessage() for r in caplog.records)
    assert not any("SECRETTEST" in r.getMessage() for r in caplog.records)


def test_actions_are_parsed_by_the_library(caplog):
    """Actions(action_str) parses with the C++ library (Actions::parse) and keeps the reference's
    behaviour: the string lower-cased, every entry it cannot use logged and skipped, no action made
    (so no AWS call), json.JSONDecodeError for text that is not JSON."""
    import json

    from smdebug_cpp.rules.action.action import Actions

    def logged(action_str):
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="smdebug_cpp"):
            assert len(Actions(action_str, "r")) == 0
        return [r.getMessage() for r in caplog.records]

    lines = logged('[{"name": "Invalid"}, {"NAME": "SMS"}, 3, {"name": "StopTraining"}, {"endpoint": "x"}]')
    assert any("action invalid not supported (allowed: stoptraining, sms, email)" in t for t in lines)
    assert any("action sms needs endpoint" in t for t in lines)
    assert any("action 3 is not an object" in t for t in lines)
    assert any("action stoptraining needs training_job_prefix" in t for t in lines)
    assert any("neither an object nor a list" in t for t in logged("5"))
    assert any("No action specified for rule r" in t for t in logged("   "))
    with pytest.raises(json.JSONDecodeError) as e:
        Actions('[{"name": "sms",', "r")
    assert e.value.pos == len('[{"name": "sms",')


def test_reference_module_paths_and_helpers():
    """Modules a reference script imports by their full path: trials.utils / local_trial / s3_trial,
    core.reductions (numpy reductions, stored-reduction names), core.logger."""
    import logging

    from smdebug_cpp.core import reductions
    from smdebug_cpp.core.logger import get_logger
    from smdebug_cpp.trials.local_trial import LocalTrial as L
    from smdebug_cpp.trials.s3_trial import S3Trial as S
    from smdebug_cpp.trials.utils import create_trial as ct

    assert (L, S, ct) == (LocalTrial, S3Trial, create_trial)
    data = np.array([[-3.0, 4.0], [1.0, -2.0]])
    assert reductions.get_numpy_reduction("l2", data) == np.linalg.norm(data, ord=2)  # a matrix: the spectral norm, as the reference
    assert reductions.get_numpy_reduction("l1", np.float32(-2.5)) == 2.5
    assert reductions.get_numpy_reduction("min", data, abs=True) == 1.0
    assert reductions.get_numpy_reduction("variance", data) == np.var(data)
    with pytest.raises(ex.SMDebugValueError):
        reductions.get_numpy_reduction("median", data)
    name = reductions.get_reduction_tensor_name("dense/kernel:0", "mean", True)
    assert name == "smdebug/reductions/abs_mean/dense/kernel"
    assert reductions.reverse_reduction_tensor_name(name) == ("dense/kernel", "mean", True)
    assert reductions.get_reduction_tensor_name("w:0", "max", False, remove_colon_index=False) == "smdebug/reductions/max/w:0"
    logger = get_logger("smdebug_cpp.test_logger")
    assert logger is get_logger("smdebug_cpp.test_logger") and logger.level == logging.INFO and not logger.propagate


def test_collection_objects_round_trip_as_the_reference(tmp_path):
    """Collection / ReductionConfig / SaveConfig / CollectionManager (de)serialise as smdebug's: a
    trial's collections survive to_json -> from_json, and CollectionManager.load reads the trial's
    own collections file into collections equal to what the trial returns."""
    from smdebug_cpp.core.collection import Collection
    from smdebug_cpp.core.collection_manager import CollectionManager
    from smdebug_cpp.core.reduction_config import ReductionConfig
    from smdebug_cpp.core.save_config import SaveConfig, SaveConfigMode

    t = create_trial(PT)
    for c in t.collections().values():
        again = Collection.from_json(c.to_json())
        assert again == c and again.to_json_dict() == c.to_json_dict()
    files = sorted((Path(PT) / "collections").rglob("*.json"))
    assert files
    cm = CollectionManager.load(str(files[0]))
    assert set(cm.collections) <= set(t.collections())
    for name, c in cm.collections.items():
        assert c.include_regex == t.collection(name).include_regex
        assert c.reduction_config == t.collection(name).reduction_config
        assert c.save_config == t.collection(name).save_config
    r = ReductionConfig.from_dict({"reductions": "min,l2_norm,abs_mean,abs_l1_norm", "save_raw_tensor": True})
    assert (r.reductions, r.norms, r.abs_reductions, r.abs_norms, r.save_raw_tensor) == (["min"], ["l2"], ["mean"], ["l1"], True)
    assert ReductionConfig.from_json(r.to_json()) == r and ReductionConfig.from_dict(None) is None
    s = SaveConfig.from_dict({"TRAIN": {"save_interval": 0, "end_step": "7"}, "EVAL": None})
    assert s.get_save_config(modes.TRAIN) == SaveConfigMode(save_interval=0, end_step=7)
    assert s.get_save_config(modes.EVAL) is None and s.get_save_config(modes.PREDICT) is None
    assert SaveConfig.from_json(s.to_json()) == s
    s.merge_default_save_config(SaveConfig(save_interval=3))
    assert s.get_save_config(modes.EVAL).save_interval == 3
    with pytest.raises(ex.SMDebugValueError):
        ReductionConfig.from_json("[1, 2]")
    # Reduction names are checked by the library, as the reference's ReductionConfig checks them.
    with pytest.raises(ex.SMDebugValueError, match="median"):
        ReductionConfig.from_dict({"reductions": "min,median"})
    with pytest.raises(ex.SMDebugValueError, match="l3"):
        ReductionConfig(norms=["l3"])
    with pytest.raises(ex.SMDebugValueError, match="mean"):
        ReductionConfig(abs_norms=["mean"])
    with pytest.raises(ex.SMDebugValueError, match="save_shape"):
        ReductionConfig.from_dict({"reductions": "min", "save_shape": "yes"})
    r = ReductionConfig.from_dict({"reductions": " max , abs_l2_norm,,l1_norm", "save_shape": True})
    assert (r.reductions, r.norms, r.abs_norms, r.save_shape, r.save_raw_tensor) == (["max"], ["l1"], ["l2"], True, False)
    assert r.to_json_dict() == {"save_raw_tensor": False, "reductions": "max,l1_norm,abs_l2_norm", "save_shape": True}
    # The save schedule is the library's (SaveConfigMode::should_save), as the reference's.
    m = SaveConfigMode(save_interval=3, start_step=2, end_step=10, save_steps=[1])
    assert [x for x in range(15) if m.should_save_step(x)] == [1, 3, 6, 9]
    assert [x for x in range(5) if SaveConfigMode(save_interval=0, save_steps=[2]).should_save_step(x)] == [2]
    assert SaveConfig(save_interval=2).should_save_step(modes.EVAL, 4) and not SaveConfig(save_interval=2).should_save_step(modes.EVAL, 5)
    with pytest.raises(ex.SMDebugValueError):
        CollectionManager.load_from_string('{"collections": {}, "surprise": 1}')
    # A collections file's save_config that is not a dict of modes is a typed error naming what was wrong.
    # Collection and SaveConfig JSON are parsed by the library's collections-file parser: a malformed
    # one is a FormatError naming what is wrong.
    with pytest.raises(ex.FormatError, match="save_config is not an object"):
        Collection.from_dict({"name": "c", "save_config": [1, 2]})
    with pytest.raises(ex.FormatError, match="SIDEWAYS"):
        SaveConfig.from_json('{"SIDEWAYS": {"save_interval": 1}}')
    with pytest.raises(ex.FormatError, match="save_interval' must be an integer"):
        SaveConfig.from_json('{"TRAIN": {"save_interval": "often"}}')
    c = Collection.from_json('{"name": "g", "include_regex": ["grad.*"], "tensor_names": ["b", "a"], "save_histogram": false,'
                             ' "reduction_config": {"reductions": "max,abs_l2_norm"},'
                             ' "save_config": {"TRAIN": {"save_interval": "5", "save_steps": [1, 2]}, "EVAL": null}}')
    assert (c.name, c.include_regex, c.tensor_names, c.save_histogram) == ("g", ["grad.*"], {"a", "b"}, False)
    assert (c.reduction_config.reductions, c.reduction_config.abs_norms) == (["max"], ["l2"])
    assert c.save_config.get_save_config(modes.TRAIN) == SaveConfigMode(save_interval=5, save_steps=[1, 2])
    assert c.save_config.get_save_config(modes.EVAL) is None
    assert Collection.from_json('{"include_regex": ["x"]}').name is None
    assert SaveConfig.from_json("null") is None
    with pytest.raises(ex.SMDebugTypeError):
        SaveConfig.from_dict({3: None})


def test_training_end_marker_and_rule_stop_signal(tmp_path, monkeypatch):
    """smdebug.core.access_layer's end-of-training helpers, on a folder and on s3rver; the rule-stop
    signal's grace time."""
    from smdebug_cpp.core.access_layer import (has_training_ended, is_rule_signalled_gracetime_passed,
                                               training_has_ended)
    from smdebug_cpp.core.access_layer.file import TSAccessFile
    from smdebug_cpp.core.access_layer.utils import check_dir_exists, delete_s3_prefixes
    from smdebug_cpp import _core

    monkeypatch.delenv("TRAINING_JOB_NAME", raising=False)
    folder = tmp_path / "job"
    assert has_training_ended(str(folder)) is False and check_dir_exists(str(folder)) is False
    training_has_ended(str(folder))
    assert (folder / "training_job_end.ts").read_bytes() == b""
    assert has_training_ended(str(folder)) is True and check_dir_exists(str(folder)) is True
    with TSAccessFile(str(folder / "notes.txt"), "w") as f:
        f.write("a")
        f.write(b"b")
        assert not (folder / "notes.txt").exists()  # written whole, at close
    with TSAccessFile(str(folder / "notes.txt"), "a+") as f:
        f.write("c")
    assert (folder / "notes.txt").read_text() == "abc"
    signal = folder / "stop-signal"
    monkeypatch.delenv("SAGEMAKER_ENV_RULE_STOP_SIGNAL_FILE", raising=False)
    assert is_rule_signalled_gracetime_passed(str(folder)) is False
    monkeypatch.setenv("SAGEMAKER_ENV_RULE_STOP_SIGNAL_FILE", "stop-signal")
    assert is_rule_signalled_gracetime_passed(str(folder)) is False  # no signal file yet
    signal.write_text(str(int(time.time())))
    assert is_rule_signalled_gracetime_passed(str(folder)) is False  # within the grace time
    signal.write_text(str(int(time.time()) - 3600))
    assert is_rule_signalled_gracetime_passed(str(folder)) is True
    # A file that holds no time is a typed error naming it, never a silent "stop" (the reference's True).
    signal.write_text("not a time")
    with pytest.raises(ex.SMDebugValueError, match="stop-signal.*'not a time'"):
        is_rule_signalled_gracetime_passed(str(folder))
    signal.write_text("0" * (8 << 20))  # huge: not a time either
    with pytest.raises(ex.SMDebugValueError, match="stop-signal"):
        is_rule_signalled_gracetime_passed(str(folder))
    signal.write_text("")  # created, its time not written yet
    assert is_rule_signalled_gracetime_passed(str(folder)) is False
    signal.unlink()
    signal.mkdir()  # cannot be read as a file: the store's typed error naming it, not True
    with pytest.raises(ex.FileRefused, match="stop-signal"):
        is_rule_signalled_gracetime_passed(str(folder))
    monkeypatch.setenv("TRAINING_JOB_NAME", "job")  # under SageMaker the marker is SageMaker's to write
    training_has_ended(str(tmp_path / "other"))
    assert not (tmp_path / "other").exists()
    monkeypatch.delenv("TRAINING_JOB_NAME")
    with s3rver_environment():
        prefix = f"s3://{BUCKET}/training-end-{uuid.uuid4()}"
        assert has_training_ended(prefix) is False
        training_has_ended(prefix)
        assert has_training_ended(prefix) is True
        delete_s3_prefixes(BUCKET, prefix[len(f"s3://{BUCKET}/"):])
        assert has_training_ended(prefix) is False
        # The rule-stop signal under an s3:// prefix is read through the library's S3 store.
        monkeypatch.setenv("SAGEMAKER_ENV_RULE_STOP_SIGNAL_FILE", "stop-signal")
        assert is_rule_signalled_gracetime_passed(prefix) is False  # no object
        _core.write_object(prefix, "stop-signal", str(int(time.time()) - 3600).encode())
        assert is_rule_signalled_gracetime_passed(prefix) is True
        _core.write_object(prefix, "stop-signal", str(int(time.time())).encode())
        assert is_rule_signalled_gracetime_passed(prefix) is False  # within the grace time
        _core.write_object(prefix, "stop-signal", b"soon")
        with pytest.raises(ex.SMDebugValueError, match="soon"):
            is_rule_signalled_gracetime_passed(prefix)
        _core.remove_object(prefix, "stop-signal")


def _index_only_trial(folder, workers_per_step, num_workers, ended):
    """Index files without events (as the reference's has_step tests build them): step -> worker indices."""
    import json

    for i in range(num_workers):
        p = folder / "collections" / "000000000" / f"worker_{i}_collections.json"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps({"collections": {}, "_meta": {"num_workers": num_workers}}))
    for step, workers in workers_per_step.items():
        for w in workers:
            p = folder / "index" / f"{step // 1000:09d}" / f"{step:012d}_worker_{w}.json"
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(json.dumps({"meta": {"mode": "TRAIN", "mode_step": step, "event_file_name": ""},
                                     "tensor_payload": [{"tensorname": "gradients/dummy:0", "start_idx": 0, "length": 1}]}))
    if ended:
        (folder / "training_job_end.ts").write_text("")


def test_last_index_token_stays_where_smdebug_leaves_it_when_training_ends(tmp_path, monkeypatch):
    """Three workers; steps 3-6 written by two of them. Ongoing: lcs 2, token at step 2. Ended: every
    step complete (lcs 6), but smdebug's last_index_token stays at step 2 (the reference's
    three-writer has_step scenarios)."""
    monkeypatch.setenv("SMDEBUG_TRAINING_END_DELAY_REFRESH", "0")
    steps = {0: [0, 1, 2], 1: [0, 1, 2], 2: [0, 1, 2], 3: [0, 2], 4: [0, 2], 5: [0, 2], 6: [0, 2]}
    for ended in (False, True):
        folder = tmp_path / ("ended" if ended else "ongoing")
        _index_only_trial(folder, steps, 3, ended)
        t = create_trial(str(folder))
        assert t.steps(show_incomplete_steps=True) == list(range(7))
        assert t.steps() == (list(range(7)) if ended else [0, 1, 2])
        assert t.last_complete_step == (6 if ended else 2)
        assert t.loaded_all_steps is ended
        assert t.last_index_token == os.path.join(str(folder), "index/000000000/000000000002_worker_2.json")
        assert t.has_passed_step(4) == (StepState.AVAILABLE if ended else StepState.NOT_YET_AVAILABLE)


# ---- smdebug_cpp.analysis: diagnose and diff (docs/diagnose.md), on MLP trials written by the Hook
# (tests/analysis/make_analysis_trials.cpp; SMDEBUG_ANALYSIS_TRIALS names the program).


@pytest.fixture(scope="module")
def analysis_trials(tmp_path_factory):
    program = os.environ.get("SMDEBUG_ANALYSIS_TRIALS")
    assert program and os.path.exists(program), "SMDEBUG_ANALYSIS_TRIALS must name make_analysis_trials (tests/cmake/python.cmake)"
    root = tmp_path_factory.mktemp("analysis")
    subprocess.run([program, str(root)], check=True)
    return root


def _cli_json(*args):
    r = subprocess.run([os.environ["SMDEBUG_CLI"], *args, "--json"], capture_output=True, text=True)
    assert r.returncode in (0, 1), r.stderr
    import json

    return json.loads(r.stdout)


def test_analysis_diagnose_names_the_module_output_and_equals_the_cli(analysis_trials):
    from smdebug_cpp.analysis import diagnose

    path = str(analysis_trials / "inf")
    d = diagnose(create_trial(path))
    f = d["first_nonfinite"]
    assert (f["step"], f["mode"], f["mode_step"], f["worker"], f["tensor"]) == (16, "TRAIN", 12, "worker_0", "fc2_output_0")
    assert f["inputs"] == {"fc2_input_0": "finite"}
    assert f["verdict"] == "module `fc2` turned finite inputs into inf"
    assert any(x["rule"] == "ExplodingTensor" and x["step"] == 16 for x in d["findings"])
    assert d == _cli_json("diagnose", path)
    assert diagnose(str(analysis_trials / "clean"))["first_nonfinite"] is None


def test_analysis_diff_names_where_runs_part_and_equals_the_cli(analysis_trials):
    from smdebug_cpp.analysis import diff

    a, b = str(analysis_trials / "clean"), str(analysis_trials / "parted")
    r = diff(create_trial(a), create_trial(b))
    d = r["first_difference"]
    assert (d["step"], d["mode"], d["mode_step"], d["tensor"]) == (10, "TRAIN", 8, "fc2.weight")
    assert d["max_abs"] == pytest.approx(1e-3, rel=1e-3)
    assert r == _cli_json("diff", a, b)
    assert diff(a, str(analysis_trials / "clean_b"))["first_difference"] is None
    assert diff(a, b, rtol=0.01, atol=0.01)["first_difference"] is None
    t = create_trial(a)
    assert diff(t, t)["first_difference"] is None  # one trial twice: compared with its own copy
    with pytest.raises(ValueError):
        diff(a, b, rtol=-1)
    with pytest.raises(TypeError):
        diff(a, 3)
