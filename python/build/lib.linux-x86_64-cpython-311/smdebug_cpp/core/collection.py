"""Collections as the analysis API returns them (read-only views of the trial's collection files),
with the attributes of smdebug's Collection, ReductionConfig, SaveConfig and SaveConfigMode."""
from .modes import ModeKeys


class ReductionConfig:
    def __init__(self, reductions=None, abs_reductions=None, norms=None, abs_norms=None, save_raw_tensor=False,
                 save_shape=False):
        self.reductions = list(reductions or [])
        self.abs_reductions = list(abs_reductions or [])
        self.norms = list(norms or [])
        self.abs_norms = list(abs_norms or [])
        self.save_raw_tensor = save_raw_tensor
        self.save_shape = save_shape

    def __eq__(self, other):
        return isinstance(other, ReductionConfig) and vars(self) == vars(other)

    def to_json_dict(self):
        items = (list(self.reductions) + [f"{n}_norm" for n in self.norms] + [f"abs_{r}" for r in self.abs_reductions]
                 + [f"abs_{n}_norm" for n in self.abs_norms])
        return {"save_raw_tensor": self.save_raw_tensor, "reductions": ",".join(items), "save_shape": self.save_shape}

    def __repr__(self):
        return (f"<class ReductionConfig: reductions={self.reductions}, abs_reductions={self.abs_reductions}, "
                f"norms={self.norms}, abs_norms={self.abs_norms}>")


class SaveConfigMode:
    def __init__(self, save_interval=None, start_step=None, end_step=None, save_steps=None):
        self.save_interval = int(save_interval or 500)
        self.save_steps = list(save_steps or [])
        self.start_step = int(start_step or 0)
        self.end_step = end_step

    def should_save_step(self, step_num):
        if step_num in self.save_steps:
            return True
        if self.start_step <= step_num and (self.end_step is None or step_num < self.end_step):
            return self.save_interval > 0 and step_num % self.save_interval == 0
        return False

    def __eq__(self, other):
        return isinstance(other, SaveConfigMode) and vars(self) == vars(other)

    def __repr__(self):
        return (f"<class SaveConfigMode: save_interval={self.save_interval}, save_steps={self.save_steps}, "
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
        out = {}
        for m in ModeKeys:
            c = self.mode_save_configs.get(m)
            out[m.name] = None if c is None else {"save_interval": c.save_interval, "save_steps": list(c.save_steps),
                                                  "start_step": c.start_step, "end_step": c.end_step}
        return out

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

    def __eq__(self, other):
        return (isinstance(other, Collection) and self.name == other.name and self.include_regex == other.include_regex
                and self.tensor_names == other.tensor_names and self.reduction_config == other.reduction_config
                and self.save_config == other.save_config)

    def __hash__(self):
        return hash(self.name)

    def __repr__(self):
        return (f"<class Collection: name={self.name}, include_regex={self.include_regex}, "
                f"tensor_names={sorted(self.tensor_names)}, reduction_config={self.reduction_config}, "
                f"save_config={self.save_config}>")


def _collection_from_core(d):
    rc = d["reduction_config"]
    sc = d["save_config"]
    save_config = None
    if sc is not None:
        save_config = SaveConfig({
            ModeKeys[mode]: (None if m is None else SaveConfigMode(m["save_interval"], m["start_step"], m["end_step"],
                                                                   m["save_steps"]))
            for mode, m in sc.items()})
    return Collection(d["name"], d["include_regex"], d["tensor_names"],
                      None if rc is None else ReductionConfig(**rc), save_config, d["save_histogram"])


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
