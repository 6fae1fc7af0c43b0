"""LocalTrial, where smdebug.trials.local_trial has it."""
from .trial import LocalTrial  # noqa: F401
