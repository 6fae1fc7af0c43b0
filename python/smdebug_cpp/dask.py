"""The smdebug analysis fanned out over Dask: reductions, stacked values and step-local rules.

``reductions``, ``values`` and ``find_first`` plan on the client from the trial opened once: its
complete steps and workers are the library's (``Trial.steps()``: the same completeness rule, end of
training included, as the single-process package; opening reads the index files, or the manifests of
a compacted trial). They return lazy Dask collections, or compute a small result, whose tasks each open the trial for
their own step range only (``create_trial(path, range_steps=(a, b))``) and read only the records of
their (worker group, step range) partition. The graph holds paths, names and step numbers, never
tensor bytes or credentials: for ``s3://`` paths every task signs its own requests from the AWS
environment of the Dask worker that runs it (AWS_* variables, profiles, instance metadata).
Scheduling, retries and results are Dask's (``dask.delayed``, ``dask.dataframe.from_delayed``,
``dask.array.from_delayed``; any scheduler, e.g. a ``distributed.Client``).

    from distributed import Client
    import smdebug_cpp.dask as sd
    client = Client("tcp://scheduler:8786")
    df = sd.reductions("s3://bucket/job/debug-output", "l2", collection="gradients")
    df.groupby(["tensor", "step"]).value.max().compute()

A trial still being written is read up to its last complete step at planning time.
"""
import math
import os

import dask
import numpy as np
import pandas as pd

__all__ = ["reductions", "values", "find_first", "diff", "STEP_LOCAL_RULES"]

COLUMNS = ["worker", "mode", "step", "mode_step", "tensor", "value"]
_DTYPES = {"worker": object, "mode": object, "step": "int64", "mode_step": "int64", "tensor": object, "value": "float64"}

def _step_local_rules():
    from .rules import builtin_rule_names, is_step_local_rule

    return tuple(n for n in builtin_rule_names() if is_step_local_rule(n))


# The built-in rules whose answer at a step depends on that step's tensors only, so that step ranges
# can be checked apart (smdebug::is_step_local_rule, include/smdebug/rules/registry.hpp).
STEP_LOCAL_RULES = _step_local_rules()

# Partitions per call when partition_steps is not given: _TASKS_PER_THREAD per thread of the
# cluster (of the distributed client in use, else this machine's cores), at least 2 and at most
# _MAX_PARTITIONS: enough to balance the load and to survive a lost worker, few enough that opening
# the trial for each task (collection files, a listing) stays a small share of the work.
_TASKS_PER_THREAD = 2
_MAX_PARTITIONS = 256


def _default_partitions():
    threads = None
    try:
        from distributed import default_client

        threads = sum(default_client().nthreads().values())
    except (ImportError, ValueError):
        pass
    if not threads:
        threads = os.cpu_count() or 1
    return max(2, min(_MAX_PARTITIONS, _TASKS_PER_THREAD * threads))


def _trials():
    from . import trials

    return trials


def _mode_name(mode):
    """None, a ModeKeys member (ours or the Python smdebug's) or a name -> 'TRAIN'... or None."""
    if mode is None:
        return None
    name = getattr(mode, "name", mode)
    if not isinstance(name, str) or name.upper() not in ("TRAIN", "EVAL", "PREDICT", "GLOBAL"):
        raise ValueError(f"mode must be TRAIN, EVAL, PREDICT or GLOBAL (a ModeKeys member or its name), not {mode!r}")
    return name.upper()


def _names(arg, what):
    if arg is None:
        return None
    if isinstance(arg, str):
        return [arg]
    try:
        out = list(arg)
    except TypeError:
        raise TypeError(f"{what} must be a string or a list of strings, not {type(arg).__name__}") from None
    if not all(isinstance(x, str) for x in out):
        raise TypeError(f"{what} must be a string or a list of strings")
    return out


def _check_partition(n, what):
    if n is None:
        return None
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"{what} must be a positive integer, not {n!r}")
    return n


def _steps_argument(steps):
    """`steps` (an iterable of global steps, or None) as a list of ints for the library."""
    if steps is None:
        return None
    if isinstance(steps, (int, np.integer)) or isinstance(steps, str):
        raise TypeError("steps must be an iterable of global steps (e.g. range(0, 100)), not a single value")
    return [int(s) for s in steps]


def _listed(path, mode=None, steps=None):
    """(complete global steps, workers) of the trial at `path`, as the library answers them (see
    module doc): the steps of `mode` when given, within `steps` when given, ascending."""
    from . import _core

    if not isinstance(path, str):
        raise TypeError("path must be a folder or an s3:// URL")
    planned, workers = _core.planned_steps(path, mode, _steps_argument(steps))
    return list(planned), list(workers)


def _chunks(steps, partition_steps):
    size = partition_steps or max(1, math.ceil(len(steps) / _default_partitions()))
    return [steps[i:i + size] for i in range(0, len(steps), size)]


def _open_range(path, chunk):
    return _trials().create_trial(path, range_steps=(chunk[0], chunk[-1] + 1))


def _empty_frame():
    return pd.DataFrame({c: pd.Series(dtype=t) for c, t in _DTYPES.items()})[COLUMNS]


def _reductions_part(path, steps, workers, tensors, collection, reduction, abs_, mode=None):
    """One partition: the rows of `workers` (None: every worker) at global `steps`, computed by the
    C++ library in one call (Trial.reduction_rows: the steps of `mode` and the tensors of
    `collection` selected there, by the index files only the task reads)."""
    trial = _open_range(path, steps)
    cols = trial.reduction_rows(steps, reduction, abs_, tensors, None if workers is None else list(workers), mode=mode,
                                collection=collection)
    if not len(cols["step"]):
        return _empty_frame()
    return pd.DataFrame(cols, columns=COLUMNS).astype(_DTYPES)


def reductions(path, reduction="mean", abs=False, tensors=None, collection=None, mode=None, steps=None, workers=None,
               partition_steps=None, partition_workers=None):
    """Reduction `reduction` (min, max, mean, prod, std, variance, sum or an L-norm such as l1, l2)
    of every selected tensor at every complete step and worker, as a lazy long-form
    ``dask.dataframe.DataFrame`` with columns ``worker, mode, step, mode_step, tensor, value``
    (value float64; the stored reduction where the Hook saved one, computed from the value otherwise).

    tensors: names (default: all); collection: a collection name; mode: ModeKeys member or name;
    steps: iterable of global steps; workers: worker names. Partitions are (worker group, step
    range): `partition_steps` steps (default: 2 tasks per thread of the cluster, at most 256) by `partition_workers` workers
    (default: all selected workers in one group, so that a step's index files are read once).
    """
    import dask.dataframe as dd

    if not isinstance(reduction, str) or not reduction:
        raise TypeError("reduction must be a reduction name such as 'mean' or 'l2'")
    mode = _mode_name(mode)
    tensors = _names(tensors, "tensors")
    workers = _names(workers, "workers")
    partition_steps = _check_partition(partition_steps, "partition_steps")
    partition_workers = _check_partition(partition_workers, "partition_workers")
    if collection is not None and not isinstance(collection, str):
        raise TypeError("collection must be a collection name")
    planned, known = _listed(path, steps=steps)  # the mode is selected by the tasks (from the index files they read)
    if workers is not None:
        unknown = sorted(set(workers) - set(known))
        if unknown:
            raise ValueError(f"workers {unknown} are not workers of the trial at {path} (it has {len(known)}: {known[:5]}...)")
        selected = [w for w in known if w in set(workers)]
    else:
        selected = None
    if partition_workers is None:
        groups = [selected]
    else:
        pool = selected if selected is not None else known
        groups = [pool[i:i + partition_workers] for i in range(0, len(pool), partition_workers)]
    part = dask.delayed(_reductions_part, pure=True)
    parts = [part(path, chunk, group, tensors, collection, reduction, bool(abs), mode)
             for chunk in _chunks(planned, partition_steps) for group in groups]
    if not parts:
        return dd.from_pandas(_empty_frame(), npartitions=1)
    return dd.from_delayed(parts, meta=_empty_frame(), verify_meta=False)


def _values_part(path, tensor, steps, worker, shape):
    trial = _open_range(path, steps)
    t = trial.tensor(tensor)
    out = []
    for step in steps:
        v = np.asarray(t.value(step, worker=worker))
        if v.shape != shape:
            raise ValueError(f"tensor {tensor} of the trial at {path} has shape {v.shape} at step {step} but "
                             f"{shape} at its first step: values() stacks tensors of one shape only")
        out.append(v)
    return np.stack(out)


def values(path, tensor, mode=None, steps=None, worker=None, partition_steps=None):
    """The values of `tensor` at every selected complete step, stacked along a first axis of steps
    into a lazy ``dask.array.Array`` chunked by step ranges of `partition_steps` (default: the steps
    split evenly into 2 chunks per thread of the cluster, the distributed client's threads or else
    this machine's cores, at least 2 and at most 256 chunks). worker: the worker whose value is read
    (default: as ``Tensor.value``). A tensor whose shape differs between steps raises ValueError
    naming both shapes and the step.
    """
    import dask.array as da

    if not isinstance(tensor, str):
        raise TypeError("tensor must be a tensor name")
    mode = _mode_name(mode)
    partition_steps = _check_partition(partition_steps, "partition_steps")
    planned = set(_listed(path, mode, steps)[0])
    trial = _trials().create_trial(path)
    t = trial.tensor(tensor)
    kw = {} if worker is None else {"worker": worker}
    planned = sorted(s for s in t.steps() if s in planned and (worker is None or worker in t.workers(s)))
    if not planned:
        raise ValueError(f"tensor {tensor} has no complete step in the selection of the trial at {path}")
    shapes = {}
    for s in planned:
        shapes.setdefault(tuple(t.shape(s, **kw)), s)
    if len(shapes) > 1:
        (s1, a), (s2, b) = sorted(shapes.items(), key=lambda kv: kv[1])[:2]
        raise ValueError(f"tensor {tensor} of the trial at {path} has shape {s1} at step {a} but {s2} at step {b}: "
                         f"values() stacks tensors of one shape only (select steps of one shape)")
    shape = next(iter(shapes))
    dtype = np.asarray(t.value(planned[0], **kw)).dtype  # one record, read here to type the array
    blocks = []
    part = dask.delayed(_values_part, pure=True)
    for chunk in _chunks(planned, partition_steps):
        blocks.append(da.from_delayed(part(path, tensor, chunk, worker, shape), shape=(len(chunk),) + shape, dtype=dtype))
    return da.concatenate(blocks, axis=0)


def _rule_part(path, rule, params, start, end):
    """First firing (step, finding) of built-in `rule` in global steps [start, end), or None: the
    trial opened for that range only, the rule run by the C++ library (smdebug_cpp.rules)."""
    from .rules import run_builtin_rule

    fired = run_builtin_rule(rule, _trials().create_trial(path, range_steps=(start, end)), dict(params), start, end,
                             first_only=True)
    return (fired[0][0], fired[0][2]) if fired else None  # (step, tensor, finding): the step's first


def find_first(path, rule, params=None, start_step=0, end_step=None, partition_steps=None):
    """Runs step-local built-in rule `rule` (see STEP_LOCAL_RULES) with `params` (name -> value; lists
    as lists or comma-separated text) over the complete global steps in [start_step, end_step), one
    Dask task per step range, and returns ``{"step": first firing global step, "message": finding}``
    or None: the same first step as the single-process ``smdebug rule`` prints. Rules that keep
    history across steps (LossNotDecreasing, UnchangedTensor, ...) raise ValueError.
    """
    if not isinstance(rule, str):
        raise TypeError("rule must be a built-in rule name such as 'ExplodingTensor'")
    canonical = {r.lower(): r for r in STEP_LOCAL_RULES}.get(rule.strip().lower())
    if canonical is None:
        raise ValueError(f"find_first runs step-local built-in rules only ({', '.join(STEP_LOCAL_RULES)}); {rule!r} "
                         "is not one of them (rules that keep history across steps need one process: smdebug rule)")
    params = dict(params or {})
    if not all(isinstance(k, str) for k in params):
        raise TypeError("params must map parameter names (strings) to values")
    items = tuple(sorted(params.items()))  # the library turns values into its text (lists, bools)
    partition_steps = _check_partition(partition_steps, "partition_steps")
    planned = [s for s in _listed(path)[0] if s >= start_step and (end_step is None or s < end_step)]  # a range, not a selection
    part = dask.delayed(_rule_part, pure=True)
    found = dask.compute(*[part(path, canonical, items, c[0], c[-1] + 1) for c in _chunks(planned, partition_steps)])
    hits = [f for f in found if f is not None]
    if not hits:
        return None
    step, message = min(hits, key=lambda f: f[0])
    return {"step": step, "message": message}


DIFF_COLUMNS = ["run", "step", "mode", "mode_step", "tensor", "max_abs", "max_rel"]


def _float_or_inf(v):
    return math.inf if isinstance(v, str) else float(v)


def _diff_part(baseline, path, rtol, atol):
    """One run against the baseline (smdebug_cpp.analysis.diff, in C++): a row of diff's frame."""
    from .analysis import diff as analysis_diff

    trials = _trials()
    r = analysis_diff(trials.create_trial(baseline), trials.create_trial(path), rtol=rtol, atol=atol)
    if r["nothing_shared"]:
        raise ValueError(f"{path} and the baseline {baseline}: {r['nothing_shared']}")
    d = r["first_difference"]
    if d is None:
        return (path, None, None, None, None, None, None)
    return (path, d["step"], d["mode"], d["mode_step"], d["tensor"], _float_or_inf(d["max_abs"]), _float_or_inf(d["max_rel"]))


def diff(baseline, paths, rtol=0.0, atol=0.0):
    """Compares one baseline run with many (``smdebug diff baseline path`` for each, one Dask task
    per run) and returns a pandas DataFrame with one row per run, in the order given: ``run`` (its
    path), ``step``, ``mode``, ``mode_step``, ``tensor``, ``max_abs``, ``max_rel`` of the first
    difference (step and tensor: the first in compute order), all null when the run matches the
    baseline. A run sharing no mode, step or tensor with the baseline raises ValueError.
    """
    if not isinstance(baseline, str):
        raise TypeError("baseline must be a trial path")
    if isinstance(paths, str) or not all(isinstance(p, str) for p in paths):
        raise TypeError("paths must be a list of trial paths")
    for name, v in (("rtol", rtol), ("atol", atol)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            raise ValueError(f"{name} must be a number >= 0, not {v!r}")
    part = dask.delayed(_diff_part, pure=True)
    rows = dask.compute(*[part(baseline, p, float(rtol), float(atol)) for p in paths])
    df = pd.DataFrame(list(rows), columns=DIFF_COLUMNS)
    df["step"] = df["step"].astype("Int64")
    df["mode_step"] = df["mode_step"].astype("Int64")
    df["max_abs"] = df["max_abs"].astype("float64")
    df["max_rel"] = df["max_rel"].astype("float64")
    return df
