"""Collections as the analysis API returns them: mutable objects made from the trial's collection
files (Trial.collections() keeps them, so a change made to one changes what the trial answers, as in
smdebug; nothing is written back to the files), with the attributes of smdebug's Collection,
ReductionConfig, SaveConfig and SaveConfigMode."""
import json

from .. import _core
from .modes import ModeKeys


def _json_object(text, what):
    from ..exceptions import SMDebugValueError

    value = json.loads(text)
    if value is not None and not isinstance(value, dict):
        raise SMDebugValueError(f"{what} JSON must be an object, not {type(value).__name__}")
    return value


class ReductionConfig:
    """smdebug's ReductionConfig: the reductions saved instead of (or with) a tensor's value. The
    names are checked, and the collection file's string form is read and written, by the C++
    library (core/collection.hpp); this class keeps the reference's attributes."""

    def __init__(self, reductions=None, abs_reductions=None, norms=None, abs_norms=None, save_raw_tensor=False,
                 save_shape=False):
        from ..exceptions import SMDebugValueError

        self.reductions = list(reductions or [])
        self.abs_reductions = list(abs_reductions or [])
        self.norms = list(norms or [])
        self.abs_norms = list(abs_norms or [])
        for flag, value in (("save_raw_tensor", save_raw_tensor), ("save_shape", save_shape)):
            if not isinstance(value, bool):
                raise SMDebugValueError(f"{flag}={value} must be a boolean")
        self.save_raw_tensor = save_raw_tensor
        self.save_shape = save_shape
        self._reductions_string()  # SMDebugValueError naming an unknown reduction, as the reference

    def __eq__(self, other):
        return isinstance(other, ReductionConfig) and vars(self) == vars(other)

    @classmethod
    def from_dict(cls, params):
        """The collection file's form, {"reductions": "min,l2_norm,abs_mean,abs_l1_norm",
        "save_raw_tensor": ..., "save_shape": ...}, as a ReductionConfig; None stays None."""
        if params is None:
            return None
        if not isinstance(params, dict):
            from ..exceptions import SMDebugValueError

            raise SMDebugValueError(f"params={params} must be dict")
        return cls(**_core.parse_reduction_config(json.dumps(params)))

    @classmethod
    def from_json(cls, json_str):
        return cls.from_dict(_json_object(json_str, "ReductionConfig"))

    def to_json(self):
        return json.dumps(self.to_json_dict())

    def _reductions_string(self):
        return _core.reductions_string(self.reductions, self.abs_reductions, self.norms, self.abs_norms)

    def to_json_dict(self):
        return {"save_raw_tensor": self.save_raw_tensor, "reductions": self._reductions_string(),
                "save_shape": self.save_shape}

    def __repr__(self):
        return (f"<class ReductionConfig: reductions={self.reductions}, abs_reductions={self.abs_reductions}, "
                f"norms={self.norms}, abs_norms={self.abs_norms}>, save_shape={self.save_shape}, "
                f"save_raw_tensor={self.save_raw_tensor}")  # smdebug's text, the ">" included


class SaveConfigMode:
    def __init__(self, save_interval=None, start_step=None, end_step=None, save_steps=None):
        self.save_interval = 500 if save_interval is None else int(save_interval)
        self.save_steps = [] if save_steps is None else list(save_steps)
        self.start_step = 0 if start_step is None else int(start_step)
        self.end_step = None if end_step is None else int(end_step)

    def to_json_dict(self):
        return {"save_interval": self.save_interval, "save_steps": list(self.save_steps), "start_step": self.start_step,
                "end_step": self.end_step}

    @classmethod
    def from_dict(cls, params, default_values=None):
        """{"save_interval": ..., "start_step": ..., "end_step": ..., "save_steps": [...]}; a key
        missing takes default_values' (then the default); None stays None."""
        from ..exceptions import SMDebugTypeError

        if params is None:
            return None
        if not isinstance(params, dict):
            raise SMDebugTypeError(f"params={params} is not a dict.")
        defaults = default_values or {}
        if not isinstance(defaults, dict):
            raise SMDebugTypeError(f"default_values={default_values} is not a dict.")
        pick = {k: params.get(k, defaults.get(k)) for k in ("save_interval", "start_step", "end_step", "save_steps")}
        return cls(**pick)

    def should_save_step(self, step_num):
        """The library's schedule (SaveConfigMode::should_save): a listed step, or every
        save_interval-th step from start_step up to end_step (excluded)."""
        return _core.should_save_step(self.save_interval, self.save_steps, self.start_step, self.end_step, int(step_num))

    def __eq__(self, other):
        return isinstance(other, SaveConfigMode) and vars(self) == vars(other)

    def __repr__(self):
        return (f"<class SaveConfig: save_interval={self.save_interval}, save_steps={self.save_steps}, "
                f"start_step={self.start_step}, end_step={self.end_step}>")


class SaveConfig:
    """Per-mode save schedules: ``save_config.get_save_config(ModeKeys.TRAIN)``; a mode that the
    collection file leaves unset is None. As smdebug's: ``SaveConfig(save_interval=10)`` applies one
    schedule to every mode; ``SaveConfig({ModeKeys.TRAIN: SaveConfigMode(...), ...})`` sets them apart."""

    def __init__(self, mode_save_configs=None, save_interval=None, start_step=None, end_step=None, save_steps=None):
        if mode_save_configs is None:
            mode_save_configs = {m: SaveConfigMode(save_interval, start_step, end_step, save_steps) for m in ModeKeys}
        else:
            mode_save_configs = dict(mode_save_configs)
            for m in ModeKeys:
                mode_save_configs.setdefault(m, None)
        self.mode_save_configs = mode_save_configs

    def to_json_dict(self):
        return {m.name: (None if self.mode_save_configs.get(m) is None else self.mode_save_configs[m].to_json_dict())
                for m in ModeKeys}

    def to_json(self):
        return json.dumps(self.to_json_dict())

    @classmethod
    def from_dict(cls, params, default_values=None):
        """{mode name or ModeKeys: SaveConfigMode, its dict form, or None}; None stays None."""
        from ..exceptions import SMDebugTypeError, SMDebugValueError

        if params is None:
            return None
        if not isinstance(params, dict):
            raise SMDebugTypeError(f"a save_config must be a dict of modes, not {type(params).__name__}")
        modes = {}
        for key, value in params.items():
            if isinstance(key, str):
                if key not in ModeKeys.__members__:
                    raise SMDebugValueError(f"save_config mode {key!r} is not one of {list(ModeKeys.__members__)}")
                mode = ModeKeys[key]
            elif isinstance(key, ModeKeys):
                mode = key
            else:
                raise SMDebugTypeError(f"a save_config mode must be a ModeKeys member or its name, not {key!r}")
            modes[mode] = value if value is None or isinstance(value, SaveConfigMode) else SaveConfigMode.from_dict(value, default_values)
        return cls(mode_save_configs=modes)

    @classmethod
    def from_json(cls, json_str):
        """{"TRAIN": {...} or null, ...} as the collection files have it, parsed by the library's
        collections-file parser (FormatError naming what is wrong); null stays None."""
        if not isinstance(json_str, (str, bytes)):
            from ..exceptions import SMDebugTypeError

            raise SMDebugTypeError(f"json_str must be a string, not {type(json_str).__name__}")
        if json.loads(json_str) is None:
            return None
        return _save_config_from_core(_core.parse_save_config(json_str, "SaveConfig JSON"))

    @classmethod
    def from_save_config_mode(cls, save_config_mode):
        return cls(mode_save_configs={m: save_config_mode for m in ModeKeys})

    @classmethod
    def parse(cls, obj):
        """None, a SaveConfig, a SaveConfigMode (for every mode) or a dict (from_dict)."""
        if obj is None:
            return cls()
        if isinstance(obj, SaveConfig):
            return obj
        if isinstance(obj, SaveConfigMode):
            return cls.from_save_config_mode(obj)
        if isinstance(obj, dict):
            return cls.from_dict(obj)
        from ..exceptions import SMDebugTypeError

        raise SMDebugTypeError(f"obj={obj} cannot be parsed into a SaveConfig object")

    def set_save_config(self, mode, save_config_mode):
        if not isinstance(save_config_mode, SaveConfigMode):
            from ..exceptions import SMDebugValueError

            raise SMDebugValueError(f"save_config_mode={save_config_mode} must be type SaveConfigMode")
        self.mode_save_configs[mode] = save_config_mode

    def merge_default_save_config(self, default_save_config):
        """Modes without a schedule take default_save_config's (or the default schedule)."""
        for m in ModeKeys:
            if self.mode_save_configs.get(m) is None:
                fallback = default_save_config.mode_save_configs.get(m)
                self.mode_save_configs[m] = fallback if fallback is not None else SaveConfigMode()

    def get_save_config(self, mode):
        return self.mode_save_configs[mode]

    def should_save_step(self, mode, step_num):
        cfg = self.mode_save_configs.get(mode)
        return cfg is not None and cfg.should_save_step(step_num)

    def __eq__(self, other):
        return isinstance(other, SaveConfig) and self.mode_save_configs == other.mode_save_configs

    def __repr__(self):
        return f"<class SaveConfig: {self.mode_save_configs}>"


class Collection:
    def __init__(self, name, include_regex=None, tensor_names=None, reduction_config=None, save_config=None,
                 save_histogram=True):
        self.name = name
        self.include_regex = list(include_regex or [])
        self._tensor_names = set(tensor_names or [])
        self.reduction_config = reduction_config
        self.save_config = save_config
        self.save_histogram = save_histogram

    @property
    def tensor_names(self):
        return self._tensor_names

    @tensor_names.setter
    def tensor_names(self, names):
        self._tensor_names = set(names or [])

    def include(self, t):
        """Adds a regex (or a list of them) to include_regex, as smdebug's Collection.include."""
        self.include_regex.extend([t] if isinstance(t, str) else list(t))

    def add_tensor_name(self, tname):
        self._tensor_names.add(tname)

    def to_json_dict(self):
        return {"name": self.name, "include_regex": list(self.include_regex), "tensor_names": sorted(self.tensor_names),
                "reduction_config": self.reduction_config.to_json_dict() if self.reduction_config else None,
                "save_config": self.save_config.to_json_dict() if self.save_config else None,
                "save_histogram": self.save_histogram}

    def to_json(self):
        return json.dumps(self.to_json_dict())

    @classmethod
    def from_dict(cls, params):
        """A collection file's entry (to_json_dict's form) as a Collection, parsed by the library's
        collections-file parser (the one that reads trials; FormatError naming what is wrong)."""
        if not isinstance(params, dict):
            from ..exceptions import SMDebugValueError

            raise SMDebugValueError(f"params={params} must be dict")
        return cls.from_json(json.dumps(params))

    @classmethod
    def from_json(cls, json_str):
        d = _core.parse_collection(json_str, "Collection JSON")
        if d["name"] == _ENTRY_KEY and "name" not in json.loads(json_str):
            d["name"] = None  # as the reference: an entry without a name gives a collection named None
        return _collection_from_core(d)

    def __eq__(self, other):
        return (isinstance(other, Collection) and self.name == other.name and self.include_regex == other.include_regex
                and self.tensor_names == other.tensor_names and self.reduction_config == other.reduction_config
                and self.save_config == other.save_config and self.save_histogram == other.save_histogram)

    def __hash__(self):
        return hash(self.name)

    def __repr__(self):
        return (f"<class Collection: name={self.name}, include_regex={self.include_regex}, "
                f"tensor_names={sorted(self.tensor_names)}, reduction_config={self.reduction_config}, "
                f"save_config={self.save_config}>")


# The key parse_collection files a collection's JSON under (the name of an entry without "name").
_ENTRY_KEY = "c"


def _save_config_from_core(sc):
    return SaveConfig({ModeKeys[mode]: (None if m is None else SaveConfigMode(m["save_interval"], m["start_step"], m["end_step"],
                                                                              m["save_steps"]))
                       for mode, m in sc.items()})


def _collection_from_core(d):
    rc = d["reduction_config"]
    sc = d["save_config"]
    return Collection(d["name"], d["include_regex"], d["tensor_names"], None if rc is None else ReductionConfig(**rc),
                      None if sc is None else _save_config_from_core(sc), d["save_histogram"])


class CollectionKeys:
    """The collection names smdebug's hooks use."""

    DEFAULT = "default"
    ALL = "all"
    INPUTS = "inputs"
    OUTPUTS = "outputs"
    WEIGHTS = "weights"
    BIASES = "biases"
    GRADIENTS = "gradients"
    LOSSES = "losses"
    SCALARS = "scalars"
    OPTIMIZER_VARIABLES = "optimizer_variables"
    LAYERS = "layers"
    METRICS = "metrics"
    SEARCHABLE_SCALARS = "sm_metrics"
