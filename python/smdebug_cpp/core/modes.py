"""ModeKeys: the modes a step is saved in, as smdebug.core.modes has them."""
from enum import Enum


class SameAsReference:
    """Enum members that compare equal to the Python smdebug's members of the same enum: same class
    name (ModeKeys, StepState), member name and value. Code that still imports ``smdebug.modes`` or
    ``smdebug.core.tensor.StepState`` then keeps working on what this package returns
    (``trial.mode(0) == smdebug.modes.TRAIN``), in either order; hashes agree too (the member's
    name, as Enum hashes), so such members find each other in sets and dict keys."""

    def __eq__(self, other):
        if type(other) is type(self):
            return self is other
        if isinstance(other, Enum) and type(other).__name__ == type(self).__name__:
            return other.name == self.name and other.value == self.value
        return NotImplemented

    def __ne__(self, other):
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = Enum.__hash__


class ModeKeys(SameAsReference, Enum):
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
