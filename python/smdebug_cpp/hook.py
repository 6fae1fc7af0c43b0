"""smdebug_cpp.Hook: records tensors from any training loop (NumPy, JAX, custom) through the C++
writer (include/smdebug/writer/hook.hpp), with the options of smdebug's hooks.

    import smdebug_cpp as smd
    hook = smd.Hook(out_dir="/tmp/run", save_config=smd.SaveConfig(save_interval=10),
                    include_collections=["weights", "losses"])
    for step in range(n):
        hook.next_step()                       # begins step 0, 1, ...
        if hook.saving:                        # optional: skip the work on steps that save nothing
            hook.save_tensor("dense.weight", w, "weights")
        hook.save_tensor("loss_output_0", loss, "losses")
    hook.close()

Values are numpy arrays or anything with ``__array__`` or ``__dlpack__`` (JAX arrays, CPU torch
tensors). The C++ Hook decides what a step saves (collections, save configs), computes the
reductions, encodes the records and writes the event, index and collection files, in the
background. smdebug_cpp.pytorch.Hook builds on this class.
"""
import atexit
import logging
import os
import weakref

from . import _core
from ._timeline import Timeline
from ._hook_options import as_array, check_storable, mode_name, reduction_config_dict, save_config_dict, string_list
from .exceptions import SMDebugError, SMDebugTypeError, SMDebugValueError

logger = logging.getLogger("smdebug_cpp")

DEFAULT_WORKER_NAME = "worker_0"

# The C++ Hook's built-in collections (writer/collection_manager.hpp).
BUILTIN_COLLECTIONS = frozenset({"all", "default", "weights", "biases", "gradients", "losses"})
# Collections a hook fills when they are included and left without patterns (docs/deviations.md D25).
IMPLICIT_PATTERNS = {"inputs": r"_input_\d+$", "outputs": r"_output_\d+$"}


class Collection:
    """A collection of the hook, as smdebug's Collection: changes are made on the C++ Hook's
    collection at once (include, add_tensor_name, save_config, reduction_config, save_histogram)."""

    def __init__(self, hook, name):
        self._hook = hook
        self.name = name
        self._modules = {}

    def _get(self):
        return self._hook._core.collection(self.name)

    def _set(self, **settings):
        self._hook._core.set_collection(self.name, settings)

    @property
    def include_regex(self):
        return list(self._get()["include_regex"])

    @include_regex.setter
    def include_regex(self, patterns):
        self._set(include_regex=string_list(patterns, "include_regex") or [])

    def include(self, t):
        """Adds a pattern (or a list of them)."""
        if isinstance(t, (list, tuple)):
            for item in t:
                self.include(item)
        elif isinstance(t, str):
            self._set(include_regex=self.include_regex + [t])
        else:
            raise SMDebugTypeError(f"Can not include {t!r} of type {type(t).__name__}: a pattern must be a string")

    @property
    def tensor_names(self):
        return set(self._get()["tensor_names"])

    @tensor_names.setter
    def tensor_names(self, names):
        self._set(tensor_names=string_list(names, "tensor_names") or [])

    def add_tensor_name(self, name):
        self._set(tensor_names=sorted(self.tensor_names | {name}))

    def has_tensor_name(self, name):
        return name in self.tensor_names

    @property
    def save_histogram(self):
        return self._get()["save_histogram"]

    @save_histogram.setter
    def save_histogram(self, value):
        self._set(save_histogram=bool(value))

    @property
    def save_config(self):
        from .core.collection import SaveConfig, SaveConfigMode

        d = self._get()["save_config"]
        if d is None:
            return None
        return SaveConfig.from_dict({m: (None if v is None else SaveConfigMode(**v)) for m, v in d.items()})

    @save_config.setter
    def save_config(self, save_config):
        self._set(save_config=save_config_dict(save_config))

    @property
    def reduction_config(self):
        from .core.collection import ReductionConfig

        d = self._get()["reduction_config"]
        return None if d is None else ReductionConfig(**d)

    @reduction_config.setter
    def reduction_config(self, reduction_config):
        self._set(reduction_config=reduction_config_dict(reduction_config))

    def add_module_tensors(self, module, inputs=False, outputs=True):
        """smdebug.pytorch's: the module's inputs / outputs join this collection (resolved when the
        first step begins, from the names register_module gives the modules)."""
        self._modules[module] = (inputs, outputs)

    @property
    def modules(self):
        return self._modules

    def __repr__(self):
        return f"<Collection {self.name}: include_regex={self.include_regex}>"


def _close_at_exit(ref):
    hook = ref()
    if hook is not None:
        hook._at_exit()


class Hook:
    """A hook without a framework: the caller begins steps (next_step) and saves values.

    anomaly_window=K (flight recorder): every step records the included collections; steps the
    save config does not ask for are kept in memory (the last K, at most anomaly_window_bytes of
    event data, default 256 MiB) and written only when a later step records a NaN or an infinity
    (a saved tensor or the loss), before that step. Then the save config goes on as usual.

    fsync=True makes each step's files durable (fsync) before the next are written, against power
    loss; by default a local folder's files are renamed into place without it, as the reference
    writes them: whole, surviving the process, and visible to readers at once.
    """

    def __init__(self, out_dir=None, export_tensorboard=False, tensorboard_dir=None, dry_run=False, reduction_config=None,
                 save_config=None, include_regex=None, include_collections=None, save_all=False, include_workers="one",
                 *, anomaly_window=0, anomaly_window_bytes=None, fsync=False, rank=None, world_size=None, worker_name=None,
                 _json_config=None):
        if include_workers not in ("one", "all"):
            raise SMDebugValueError(f"include_workers={include_workers!r} must be \"one\" or \"all\"")
        if rank is None:
            rank, world_size = self._get_rank_and_world_size()
        world_size = 1 if world_size is None else world_size
        if worker_name is None:
            worker_name = self._get_worker_name()
        self.dry_run = bool(dry_run)
        options = {"include_workers": include_workers, "rank": int(rank), "world_size": int(world_size),
                   "worker_name": worker_name, "fsync": bool(fsync)}
        if self.dry_run:
            options["enabled"] = False
        if world_size > 1 and rank != 0:
            options["write_end_marker"] = False  # one writer of training_job_end.ts: rank 0
        if not isinstance(anomaly_window, int) or isinstance(anomaly_window, bool) or anomaly_window < 0:
            raise SMDebugValueError(f"anomaly_window={anomaly_window!r} must be 0 (off) or a number of steps")
        options["anomaly_window"] = anomaly_window
        if anomaly_window_bytes is not None:
            options["anomaly_window_bytes"] = int(anomaly_window_bytes)
        self.anomaly_window = anomaly_window
        if _json_config is not None:
            path, out, tb, export = _json_config
            self._deferred_includes = []
            self._core = _core._Hook.from_json_file(path, options)
            self.out_dir, self.tensorboard_dir = out, tb
            self.export_tensorboard = export or tb is not None
        else:
            if out_dir is None:
                raise SMDebugValueError("out_dir is required: a folder or s3://bucket/prefix (or use create_from_json_file)")
            if not isinstance(out_dir, (str, os.PathLike)):
                raise SMDebugTypeError(f"out_dir={out_dir!r} must be a path or an s3:// URL")
            out_dir = os.fspath(out_dir)
            # As the reference, including a collection that nothing defines saves nothing: names other
            # than the built-in collections are included when the first step begins, if by then
            # get_collection() gave them patterns or tensor names (or they are inputs / outputs).
            names = string_list(include_collections, "include_collections")
            self._deferred_includes = [] if names is None else [n for n in names if n not in BUILTIN_COLLECTIONS]
            if names is not None:
                include_collections = [n for n in names if n in BUILTIN_COLLECTIONS]
            options.update(save_config=save_config_dict(save_config), reduction_config=reduction_config_dict(reduction_config),
                           include_regex=string_list(include_regex, "include_regex"),
                           include_collections=string_list(include_collections, "include_collections"),
                           save_all=bool(save_all), export_tensorboard=bool(export_tensorboard),
                           tensorboard_dir=None if tensorboard_dir is None else os.fspath(tensorboard_dir))
            self._core = _core._Hook(out_dir, options)
            self.out_dir = out_dir
            if tensorboard_dir is not None:
                self.tensorboard_dir = os.fspath(tensorboard_dir)
            elif export_tensorboard:
                self.tensorboard_dir = os.path.join(out_dir, "tensorboard")
            else:
                self.tensorboard_dir = None
            self.export_tensorboard = self.tensorboard_dir is not None
        self.include_workers = include_workers
        self.worker = self._core.worker
        self._collections = {}
        self._pending_scalars = []   # save_scalar before the first step: written into step 0
        self._warned = set()
        self._timeline = Timeline(self.worker)
        atexit.register(_close_at_exit, weakref.ref(self))

    # ---- construction from the JSON configuration ---------------------------------------------------

    @classmethod
    def create_from_json_file(cls, json_file_path=None, **kwargs):
        """The hook the JSON configuration at `json_file_path` describes (default: the file
        SMDEBUG_CONFIG_FILE_PATH names, else /opt/ml/input/config/debughookconfig.json). A missing
        file raises FileNotFoundError (smdebug_cpp.exceptions.ObjectNotFound); one that does not
        parse, SMDebugValueError naming it."""
        path = "" if json_file_path is None else os.fspath(json_file_path)
        out_dir, tb_dir, export = _core._Hook.parse_json_config(path)
        return cls(_json_config=(path, out_dir, tb_dir, export), **kwargs)

    # ---- workers ------------------------------------------------------------------------------------

    def _get_rank_and_world_size(self):
        return 0, 1

    def _get_worker_name(self):
        return DEFAULT_WORKER_NAME

    def _get_num_workers(self):
        return self._get_rank_and_world_size()[1]

    # ---- steps and modes ----------------------------------------------------------------------------

    def set_mode(self, mode):
        """modes.TRAIN / EVAL / PREDICT / GLOBAL (smdebug_cpp's or the reference's ModeKeys); the
        steps that begin from now on have this mode."""
        self._core.set_mode(mode_name(mode))

    @property
    def mode(self):
        from .core.modes import ModeKeys

        return ModeKeys[self._core.step_mode]

    @property
    def step(self):
        return self._core.global_step

    @property
    def saving(self):
        """Whether the current step saves anything."""
        return self._core.saving

    def _apply_deferred_includes(self):
        deferred, self._deferred_includes = self._deferred_includes, []
        for name in deferred:
            existing = set(self._core.collection_names())
            if name in IMPLICIT_PATTERNS:
                c = self._core.collection(name)
                if not c["include_regex"] and not c["tensor_names"]:
                    self._core.set_collection(name, {"include_regex": [IMPLICIT_PATTERNS[name]]})
            elif name not in existing:
                continue
            self._core.include_collection(name)

    def next_step(self):
        """Closes the current step and begins the next; returns whether the new one saves anything."""
        first = self._core.global_step < 0
        if first and self._deferred_includes:
            self._apply_deferred_includes()
        saving = self._core.next_step()
        if first and self._pending_scalars:
            self._flush_pending_scalars()
        return saving

    # ---- saving -------------------------------------------------------------------------------------

    def save_tensor(self, tensor_name, tensor_value, collections_to_write="default"):
        """Saves `tensor_value` as `tensor_name` in the current step when one of its collections
        saves now (a collection named here is created and included when new). Returns whether
        anything was recorded."""
        name = self._check_name(tensor_name)
        colls = string_list(collections_to_write, "collections_to_write") or []
        arr = self._to_array(name, tensor_value)
        check_storable(name, arr)
        return self._core.save_tensor(name, arr, colls)

    def save_scalar(self, name, value, sm_metric=False, timestamp=None):
        """Records "scalar/<name>" in the current step (step 0 when called before it)."""
        name = self._check_name(name)
        arr = self._to_array(name, value)
        if arr.size != 1:
            raise SMDebugTypeError(f"scalar/{name} has non scalar value of type: {type(value).__name__}")
        check_storable(name, arr)
        ts = None if timestamp is None else float(timestamp)
        if self._core.global_step < 0 and not self._core.closed:
            self._pending_scalars.append((name, arr, ts))
            return
        self._core.save_scalar(name, arr, ts)

    def _flush_pending_scalars(self):
        pending, self._pending_scalars = self._pending_scalars, []
        for name, arr, ts in pending:
            self._core.save_scalar(name, arr, ts)

    def _to_array(self, name, value):
        return as_array(name, value)

    @staticmethod
    def _check_name(name):
        if not isinstance(name, str):
            raise SMDebugTypeError(f"tensor name {name!r} must be a string")
        if not name or "\0" in name:
            raise SMDebugValueError(f"tensor name {name!r} is empty or holds a NUL character")
        return name

    def record_trace_events(self, timestamp, training_phase="", op_name="", phase="X", duration=1, **kwargs):
        """The reference's timeline call: recorded when profiling is configured (smdebug_cpp/_timeline.py)."""
        self._timeline.record(timestamp, training_phase=training_phase, op_name=op_name, phase=phase,
                              duration=duration, **kwargs)

    # ---- collections --------------------------------------------------------------------------------

    def get_collection(self, name, create=True):
        if name not in self._collections:
            self._core.collection(name, create)  # SMDebugValueError when missing and create is False
            self._collections[name] = Collection(self, name)
        return self._collections[name]

    def get_collections(self):
        return {n: self.get_collection(n) for n in self._core.collection_names()}

    # ---- lifecycle ----------------------------------------------------------------------------------

    def flush(self):
        """Returns once every closed step is on the store."""
        self._core.flush()

    def close(self):
        """Writes the current step, the collections and the end marker; idempotent."""
        if self._pending_scalars:
            self._flush_pending_scalars()
        self._core.close()
        self._timeline.close()

    def _cleanup(self):
        self.close()

    def _at_exit(self):
        # A program that ends without close(): its closed steps are written (no end marker).
        try:
            if not self._core.closed:
                self._core.flush()
        except SMDebugError as e:
            logger.error("smdebug_cpp: the hook for %s could not write its steps at exit: %s", self.out_dir, e)

    # A model saved with torch.save(model) pickles the hooks registered on it: they come back inert
    # (they record nothing), as the reference's do.
    def __getstate__(self):
        return {}

    def __setstate__(self, state):
        self._core = None
        self._warned = set()

    def __repr__(self):
        return f"<{type(self).__module__}.{type(self).__name__} out_dir={self.out_dir} worker={self.worker}>"
