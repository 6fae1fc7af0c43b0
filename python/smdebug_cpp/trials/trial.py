"""Trial: the saved tensors of one training job, with the methods of smdebug.trials.Trial.

A Trial refreshes itself from inside queries while training still writes, exactly as smdebug's
(``analysis.utils.no_refresh`` / ``refresh`` switch that off and on). The C++ Trial is used by one
thread at a time, so the binding holds it in a SharedTrial (query/shared_trial.hpp), which
serialises the calls on one Trial; they release the GIL while they wait or read. Many Python
threads may share a Trial; for parallel reads give each thread its own Trial over the same path.
"""
import os

from .. import _core
from ..core.collection import Collection, _collection_from_core
from ..core.modes import ModeKeys, _mode_name, _to_mode_keys
from ..core.tensor import StepState, Tensor, _int


def _flatten_regex(regex, out):
    if isinstance(regex, str):
        out.append(regex)
    elif isinstance(regex, (list, tuple)):
        for r in regex:
            _flatten_regex(r, out)
    else:
        raise TypeError(f"regex must be a string or a (nested) list of strings, not {type(regex).__name__}")
    return out


def _range_bound(value, which):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"range_steps {which} must be None or a non-negative int, not {value!r}")
    return value


class Trial:
    """Base of LocalTrial and S3Trial. Use ``smdebug_cpp.trials.create_trial(path)``."""

    def __init__(self, name, path, range_steps=None, parallel=True, check=False, index_mode=True, cache=False,
                 wait_timeout=None, poll_interval=None, max_concurrency=None, max_expanded_elements=None):
        if not isinstance(path, str):
            raise TypeError(f"path must be a string, not {type(path).__name__}")
        if name is not None and not isinstance(name, str):
            raise TypeError(f"name must be a string, not {type(name).__name__}")
        begin = end = None
        if range_steps is not None:
            try:
                begin, end = range_steps
            except (TypeError, ValueError):
                raise ValueError(f"range_steps must be a (begin, end) pair, not {range_steps!r}") from None
            begin, end = _range_bound(begin, "begin"), _range_bound(end, "end")
            if begin is not None and end is not None and end <= begin:
                raise ValueError("range_steps should be of the form (begin, end) where begin is less than end")
        self.name = name
        self.range_steps = range_steps
        self.parallel = parallel
        self.check = check
        self.index_mode = index_mode
        self.cache = cache
        self._tensors = {}
        self._collections = None
        self._file_members = {}
        if max_concurrency is not None and (isinstance(max_concurrency, bool) or not isinstance(max_concurrency, int)):
            raise TypeError(f"max_concurrency must be an int, not {type(max_concurrency).__name__}")
        if max_expanded_elements is not None and (isinstance(max_expanded_elements, bool) or
                                                  not isinstance(max_expanded_elements, int) or max_expanded_elements < 1):
            raise ValueError(f"max_expanded_elements must be a positive int, not {max_expanded_elements!r}")
        self._core = _core.Trial(path, name, begin, end, bool(cache), bool(index_mode), wait_timeout, poll_interval,
                                 max_concurrency, max_expanded_elements)
        self.path = path
        self._index_token_prefix = path

    # -- identity --------------------------------------------------------------------------------
    def __hash__(self):
        return hash((self.name, self.path))

    def __eq__(self, other):
        return isinstance(other, Trial) and (self.name, self.path) == (other.name, other.path)

    def __repr__(self):
        if "path" not in vars(self):  # its constructor raised (a traceback shows it): no state to show
            return f"<{self.__class__.__module__}.{self.__class__.__name__} object at {hex(id(self))}>"
        return (f"<{self.__class__.__module__}.{self.__class__.__name__} object at {hex(id(self))}>:(\n"
                f"    name={self.name},\n    path={self.path},\n    steps={self.steps()},\n"
                f"    collections={list(self.collections().keys())},\n    tensor_names={self.tensor_names()},\n)")

    # -- refresh ---------------------------------------------------------------------------------
    @property
    def dynamic_refresh(self):
        return self._core.dynamic_refresh

    @dynamic_refresh.setter
    def dynamic_refresh(self, on):
        self._core.dynamic_refresh = bool(on)

    @property
    def loaded_all_steps(self):
        return self._core.loaded_all_steps

    @property
    def last_complete_step(self):
        return self._core.last_complete_step

    @property
    def last_index_token(self):
        """As smdebug reports it: the index file of the last complete step of the last worker by
        name, under the trial's path (None before a step is complete), as of the last refresh —
        the end of training completes every step but leaves this where it was, as smdebug does.
        The C++ library's own listing position (D11) is ``index_listing_position``."""
        key = self._core.reference_index_key  # the library's (docs/semantics.md §2.6)
        return None if key is None else os.path.join(self._index_token_prefix, key)

    @property
    def index_listing_position(self):
        """Where the next refresh starts listing index keys (smdebug_cpp only, D11)."""
        return self._core.last_index_token

    @property
    def num_workers(self):
        return self._core.num_workers

    def refresh_data(self):
        self._core.refresh_data()

    def refresh_tensor(self, tname, steps=None):
        """As smdebug's: a refresh of the whole index (tensors are not loaded one by one)."""
        self.refresh_data()

    def maybe_refresh(self, name=None):
        """One refresh as the queries do it, by the library's policy (Trial::maybe_refresh: the
        dynamic_refresh switch, the end of training and its delay)."""
        self._core.maybe_refresh()

    def training_ended(self):
        """Whether the training-end marker (training_job_end.ts) exists."""
        return self._core.training_ended()

    def last_step(self):
        """The newest step any worker has written an index file for, or None: searched in the store
        by step (O(log steps) listings of one key), without listing the whole index and without a
        refresh (smdebug_cpp only)."""
        return self._core.last_step()

    # -- tensors ---------------------------------------------------------------------------------
    def tensor_names(self, show_prefixed_tensors=False, *, step=None, mode=ModeKeys.GLOBAL, regex=None,
                     collection=None) -> list:
        """Names of saved tensors, sorted: of a step (global, or a mode step with mode), of a mode,
        matching a regex (a string or a nested list; re.search semantics) or in a collection."""
        if step is not None:
            step = _int(step, "step")
        patterns = [] if regex is None else _flatten_regex(regex, [])
        if collection is None:
            return self._core.tensor_names(step, _mode_name(mode), patterns, None)
        if isinstance(collection, Collection):
            name = collection.name
        elif isinstance(collection, str):
            name = collection
        else:
            raise TypeError(f"collection must be a collection name or a Collection, not {type(collection).__name__}")
        if patterns:
            from ..exceptions import SMDebugValueError

            raise SMDebugValueError("Only one of `regex` or `collection` can be passed to this method")
        coll = self.collection(name)  # as smdebug: an unknown name becomes an empty collection
        if self._as_in_files(coll):
            return self._core.tensor_names(step, _mode_name(mode), [], name)
        # A collection changed (or made) in Python: its members by the library's rule.
        return self._core.collection_tensor_names(step, _mode_name(mode), sorted(coll.tensor_names),
                                                  list(coll.include_regex))

    def tensor(self, tname):
        """The Tensor `tname`; TensorUnavailable when no step saved it (yet)."""
        t = self._tensors.get(tname)
        if t is not None:
            return t
        if not isinstance(tname, str):
            raise TypeError(f"tname must be a string, not {type(tname).__name__}")
        self._core.check_tensor(tname)
        t = self._tensors[tname] = Tensor(tname, self, self.cache)
        return t

    def has_tensor(self, tname):
        if not isinstance(tname, str):
            raise TypeError(f"tname must be a string, not {type(tname).__name__}")
        return self._core.has_tensor(tname)

    def values(self, step, tensor_names=None, mode=ModeKeys.GLOBAL, worker=None):
        """{name: value} of many tensors at one step in one batched read (smdebug_cpp only);
        tensor_names=None: every tensor saved at the step."""
        step = _int(step, "step")
        if tensor_names is None:
            tensor_names = self.tensor_names(step=step, mode=mode)
        elif isinstance(tensor_names, str):
            tensor_names = [tensor_names]
        return self._core.values_at(step, list(tensor_names), _mode_name(mode), worker)

    def read_values(self, wanted, mode=ModeKeys.GLOBAL, worker=None):
        """{name: {step: value}} of many tensors at many steps, read in one planned set of reads
        (smdebug_cpp only; smdebug issue #98): wanted is {name: [steps]}. The first failing
        (name, step) raises what Tensor.value would raise for it."""
        if not isinstance(wanted, dict):
            raise TypeError(f"wanted must be a dict of tensor name to steps, not {type(wanted).__name__}")
        pairs = [(str(name), [_int(s, "step") for s in steps]) for name, steps in wanted.items()]
        return self._core.read_values(pairs, _mode_name(mode), worker)

    # -- steps and modes -------------------------------------------------------------------------
    def workers(self):
        return self._core.workers()

    def steps(self, mode=ModeKeys.GLOBAL, show_incomplete_steps=False) -> list:
        """Complete steps (all workers wrote them), ascending; mode steps for a mode."""
        return self._core.steps(_mode_name(mode), bool(show_incomplete_steps))

    def modes(self):
        return [ModeKeys[m] for m in self._core.modes()]

    def mode_modestep(self, global_step):
        mm = self._core.mode_modestep(_int(global_step, "global_step"))
        if mm is None:
            return None, None
        return ModeKeys[mm[0]], mm[1]

    def mode(self, global_step):
        return self.mode_modestep(global_step)[0]

    def mode_step(self, global_step):
        return self.mode_modestep(global_step)[1]

    def global_step(self, mode, mode_step):
        return self._core.global_step(_mode_name(mode), _int(mode_step, "mode_step"))

    def has_passed_step(self, step, mode=ModeKeys.GLOBAL) -> StepState:
        return StepState[self._core.has_passed_step(_int(step, "step"), _mode_name(mode))]

    def wait_for_steps(self, required_steps, mode=ModeKeys.GLOBAL, timeout=None):
        """Blocks until every step is available; StepUnavailable / NoMoreData as smdebug, and
        smdebug_cpp.exceptions.TimeoutError once `timeout` seconds (None: no limit) pass."""
        if isinstance(required_steps, (int, str)):
            raise TypeError("required_steps must be a list of steps")
        steps = [_int(s, "required_steps") for s in required_steps]
        if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout < 0):
            raise ValueError(f"timeout must be None or a number of seconds >= 0, not {timeout!r}")
        self._core.wait_for_steps(steps, _mode_name(mode), timeout)

    # -- collections -----------------------------------------------------------------------------
    def collections(self):
        """{name: Collection}: the trial's collections, read from its collection files, as mutable
        objects that the trial keeps (as smdebug's CollectionManager): a collection changed here
        (include(), add_tensor_name(), tensor_names = ...) changes tensor_names(collection=)."""
        if self._collections is None:
            self._collections = {n: _collection_from_core(c) for n, c in self._core.collections().items()}
            self._file_members = {n: (frozenset(c.tensor_names), tuple(c.include_regex))
                                  for n, c in self._collections.items()}
        return self._collections

    def collection(self, coll_name):
        """The collection `coll_name`. As smdebug, a name the trial does not have becomes a new,
        empty collection of the trial (the C++ library raises CollectionNotFound instead, D8)."""
        if not isinstance(coll_name, str):
            raise TypeError(f"coll_name must be a string, not {type(coll_name).__name__}")
        colls = self.collections()
        if coll_name not in colls:
            colls[coll_name] = Collection(coll_name)
        return colls[coll_name]

    def _as_in_files(self, coll):
        state = self._file_members.get(coll.name)
        return state is not None and self._collections.get(coll.name) is coll and \
            state == (frozenset(coll.tensor_names), tuple(coll.include_regex))

    # -- special collections, as smdebug ---------------------------------------------------------
    def _collection_values(self, name, step, mode):
        names = self.tensor_names(step=step, mode=mode, collection=name)
        return [self.tensor(n).value(step, mode=mode) for n in names]

    def inputs(self, step, mode=ModeKeys.GLOBAL):
        return self._collection_values("inputs", step, mode)

    def labels(self, step, mode=ModeKeys.GLOBAL):
        return self._collection_values("labels", step, mode)

    def predictions(self, step, mode=ModeKeys.GLOBAL):
        return self._collection_values("predictions", step, mode)

    def reduction_rows(self, steps, reduction="mean", abs=False, tensors=None, workers=None, mode=None, collection=None):
        """One reduction of every (tensor, worker) at the given global steps, computed in one call
        with the GIL released (smdebug_cpp only): a dict of columns worker, mode, step, mode_step,
        tensor (lists; step and mode_step int64 arrays) and value (a float64 array), in step, then
        tensor name, then worker order. `tensors` / `workers` / `mode` (steps of that mode) /
        `collection` (its tensors, by the library's membership rule) select; a (tensor, step,
        worker) with neither the reduction nor the value saved is left out."""
        if isinstance(steps, (int, str)):
            raise TypeError("steps must be a list of global steps")
        steps = [_int(s, "steps") for s in steps]
        if not isinstance(reduction, str):
            raise TypeError(f"reduction must be a string, not {type(reduction).__name__}")
        tensors = None if tensors is None else [tensors] if isinstance(tensors, str) else list(tensors)
        workers = None if workers is None else [workers] if isinstance(workers, str) else list(workers)
        if collection is not None and not isinstance(collection, str):
            raise TypeError(f"collection must be a collection name, not {type(collection).__name__}")
        mode = None if mode is None else _mode_name(mode)
        w, m, st, ms, t, v = self._core.reduction_rows(steps, reduction, bool(abs), tensors, workers, mode, collection)
        return {"worker": w, "mode": m, "step": st, "mode_step": ms, "tensor": t, "value": v}

    def refresh_stats(self):
        """Counters of the listings and index reads so far (smdebug_cpp only)."""
        return self._core.refresh_stats()


class LocalTrial(Trial):
    def __init__(self, name, dirname, range_steps=None, parallel=True, check=False, index_mode=True, cache=False,
                 **kwargs):
        super().__init__(name, os.path.expanduser(dirname), range_steps, parallel, check, index_mode, cache, **kwargs)
        self.trial_dir = self.path


class S3Trial(Trial):
    def __init__(self, name, bucket_name, prefix_name, range_steps=None, check=False, index_mode=True, cache=False,
                 **kwargs):
        self.bucket_name = bucket_name
        self.prefix_name = os.path.join(prefix_name, "")
        super().__init__(name, "s3://" + os.path.join(bucket_name, self.prefix_name), range_steps, False, check,
                         index_mode, cache, **kwargs)
        self._index_token_prefix = self.prefix_name  # smdebug's S3 tokens are keys, without the bucket
