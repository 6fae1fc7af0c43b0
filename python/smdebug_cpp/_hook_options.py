"""Plain-dict forms of the hook's arguments for the C++ Hook (python/src/bind_hook.cpp).

SaveConfig, SaveConfigMode, ReductionConfig and modes are read by their attributes, so the
reference package's objects (``smdebug.SaveConfig``, ``smdebug.modes.TRAIN``) are accepted as well
as smdebug_cpp's.
"""
import numpy as np

from .exceptions import SMDebugTypeError, SMDebugValueError

MODE_NAMES = ("TRAIN", "EVAL", "PREDICT", "GLOBAL")


def mode_name(mode, argument="mode"):
    """'TRAIN' ... for a ModeKeys member (smdebug_cpp's or the reference's) or a mode name."""
    name = mode if isinstance(mode, str) else getattr(mode, "name", None)
    if name not in MODE_NAMES:
        raise SMDebugValueError(f"Invalid {argument} {mode}. Valid modes are {','.join(MODE_NAMES)}.")
    return name


def _save_config_mode_dict(scm):
    if isinstance(scm, dict):
        scm = _SaveConfigModeArgs(**scm)
    for attr in ("save_interval", "save_steps", "start_step", "end_step"):
        if not hasattr(scm, attr):
            raise SMDebugTypeError(f"save config {scm!r} is not a SaveConfigMode (it has no {attr})")
    interval = 500 if scm.save_interval is None else scm.save_interval
    try:
        return {"save_interval": int(interval), "save_steps": [int(s) for s in (scm.save_steps or [])],
                "start_step": int(scm.start_step or 0), "end_step": None if scm.end_step is None else int(scm.end_step)}
    except (TypeError, ValueError) as e:
        raise SMDebugValueError(f"save config {scm!r}: {e}") from None


class _SaveConfigModeArgs:
    def __init__(self, save_interval=None, start_step=None, end_step=None, save_steps=None):
        self.save_interval, self.start_step, self.end_step, self.save_steps = save_interval, start_step, end_step, save_steps


def save_config_dict(save_config):
    """{"TRAIN": {...} or None, ...} for a SaveConfig, a SaveConfigMode (every mode), a dict of
    modes, or None (None: the hook's default)."""
    if save_config is None:
        return None
    if hasattr(save_config, "mode_save_configs"):
        modes = save_config.mode_save_configs
    elif hasattr(save_config, "save_interval"):
        return {m: _save_config_mode_dict(save_config) for m in MODE_NAMES}
    elif isinstance(save_config, dict):
        modes = save_config
    else:
        raise SMDebugTypeError(f"save_config={save_config!r} must be a SaveConfig, a SaveConfigMode or a dict of modes")
    out = {}
    for mode, scm in modes.items():
        out[mode_name(mode, "save_config mode")] = None if scm is None else _save_config_mode_dict(scm)
    return out


def reduction_config_dict(reduction_config):
    if reduction_config is None:
        return None
    for attr in ("reductions", "abs_reductions", "norms", "abs_norms", "save_raw_tensor", "save_shape"):
        if not hasattr(reduction_config, attr):
            raise SMDebugTypeError(f"reduction_config={reduction_config!r} is not a ReductionConfig (it has no {attr})")
    return {"reductions": list(reduction_config.reductions or []), "abs_reductions": list(reduction_config.abs_reductions or []),
            "norms": list(reduction_config.norms or []), "abs_norms": list(reduction_config.abs_norms or []),
            "save_raw_tensor": bool(reduction_config.save_raw_tensor), "save_shape": bool(reduction_config.save_shape)}


def string_list(value, argument):
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    try:
        items = list(value)
    except TypeError:
        raise SMDebugTypeError(f"{argument}={value!r} must be a list of strings") from None
    for item in items:
        if not isinstance(item, str):
            raise SMDebugTypeError(f"{argument}={value!r} must be a list of strings ({item!r} is not one)")
    return items


# numpy dtype kinds and sizes the format stores (core/dtype.hpp).
_STORABLE = {"f": (2, 4, 8), "i": (1, 2, 4, 8), "u": (1, 2, 4, 8), "b": (1,), "c": (8, 16)}


def check_storable(name, array):
    """SMDebugTypeError naming the tensor when smdebug cannot store its dtype."""
    dt = array.dtype
    if dt.itemsize not in _STORABLE.get(dt.kind, ()):
        raise SMDebugTypeError(f"tensor {name}: dtype {dt} cannot be stored by smdebug "
                               "(float16/32/64, int8-64, uint8-64, bool, complex64/128)")


def as_array(name, value):
    """A numpy array for `value`: numpy arrays as they are, then __array__, then DLPack, then
    numpy.asarray (Python numbers, lists)."""
    if isinstance(value, np.ndarray):
        return value
    if hasattr(value, "__array__"):
        return np.asarray(value)
    if hasattr(value, "__dlpack__") and hasattr(np, "from_dlpack"):
        try:
            return np.from_dlpack(value)
        except (TypeError, RuntimeError, BufferError) as e:
            raise SMDebugTypeError(f"tensor {name}: its DLPack capsule cannot be read on the host ({e})") from None
    try:
        arr = np.asarray(value)
    except Exception as e:  # noqa: BLE001 - any conversion failure is the caller's bad value
        raise SMDebugTypeError(f"tensor {name}: a {type(value).__name__} cannot be converted to an array ({e})") from None
    if arr.dtype == object:
        raise SMDebugTypeError(f"tensor {name}: a {type(value).__name__} is not a numeric array")
    return arr
