"""``from smdebug_cpp import modes`` then ``modes.TRAIN``, as ``from smdebug import modes``."""
from .core.modes import ALLOWED_MODE_NAMES, ALLOWED_MODES, ModeKeys, str_to_mode_keys

TRAIN = ModeKeys.TRAIN
EVAL = ModeKeys.EVAL
PREDICT = ModeKeys.PREDICT
GLOBAL = ModeKeys.GLOBAL

__all__ = ["ModeKeys", "TRAIN", "EVAL", "PREDICT", "GLOBAL", "ALLOWED_MODES", "ALLOWED_MODE_NAMES", "str_to_mode_keys"]
