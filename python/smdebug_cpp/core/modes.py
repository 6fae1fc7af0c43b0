"""ModeKeys: the modes a step is saved in, as smdebug.core.modes has them."""
from enum import Enum


class ModeKeys(Enum):
    TRAIN = 1  # training/fitting mode
    EVAL = 2  # testing/evaluation mode
    PREDICT = 3  # prediction/inference mode
    GLOBAL = 4


ALLOWED_MODES = [ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT, ModeKeys.GLOBAL]
ALLOWED_MODE_NAMES = [x.name for x in ALLOWED_MODES]


def str_to_mode_keys(mode_str):
    try:
        return ModeKeys[mode_str.upper()]
    except (KeyError, AttributeError):
        raise ValueError(f"Invalid mode {mode_str!r}") from None


def _mode_name(mode, argument="mode"):
    """The C++ name of a mode argument: a ModeKeys member (ours, the Python smdebug's, any enum
    member named TRAIN/EVAL/PREDICT/GLOBAL) or one of those names. TypeError / ValueError otherwise."""
    if isinstance(mode, ModeKeys):
        return mode.name
    name = getattr(mode, "name", None) if isinstance(mode, Enum) else mode
    if not isinstance(name, str):
        raise TypeError(f"{argument} must be a ModeKeys member (TRAIN, EVAL, PREDICT or GLOBAL), not {type(mode).__name__}")
    upper = name.upper()
    if upper not in ALLOWED_MODE_NAMES:
        raise ValueError(f"{argument} must be TRAIN, EVAL, PREDICT or GLOBAL, not {mode!r}")
    return upper


def _to_mode_keys(name):
    return ModeKeys[name] if isinstance(name, str) else name
