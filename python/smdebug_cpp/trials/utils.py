"""create_trial, where smdebug.trials.utils has it."""
from . import create_trial  # noqa: F401
