"""Where training went wrong and where two runs part, computed by the C++ library
(smdebug/analysis/: docs/diagnose.md):

    from smdebug_cpp.trials import create_trial
    from smdebug_cpp.analysis import diagnose, diff
    d = diagnose(create_trial("/runs/a"))          # the dict of `smdebug diagnose --json`
    d["first_nonfinite"]                            # {"step", "mode", "mode_step", "worker", "tensor", "inputs", ...} or None
    r = diff(create_trial("/runs/a"), create_trial("/runs/b"), rtol=1e-5)   # `smdebug diff --json`
    r["first_difference"]                           # {"step", "mode", "mode_step", "tensor", "max_abs", "max_rel", ...} or None

A trial may also be given as its path. ``smdebug_cpp.analysis.utils`` is the reference's helpers.
"""
import json
import math

from .. import _core

__all__ = ["diagnose", "diff"]


def _core_trial(trial, what):
    if isinstance(trial, str):
        from ..trials import create_trial

        trial = create_trial(trial)
    core = getattr(trial, "_core", None)
    if core is None:
        raise TypeError(f"{what} must be a trial (smdebug_cpp.trials.create_trial) or its path, not {type(trial).__name__}")
    return trial, core


def diagnose(trial):
    """The first non-finite value of the trial (per worker, with its verdict) and the earliest finding
    of each built-in rule that runs without parameters: the dict of ``smdebug diagnose --json``."""
    _, core = _core_trial(trial, "trial")
    return json.loads(_core.diagnose(core))


def diff(trial_a, trial_b, rtol=0.0, atol=0.0):
    """Where two runs part (steps aligned by mode and mode step; bitwise unless rtol/atol, with
    |a-b| <= atol + rtol*|a|): the dict of ``smdebug diff --json``. ``first_difference`` is None
    when every tensor both runs saved agrees; ``nothing_shared`` says why nothing could be compared."""
    for name, v in (("rtol", rtol), ("atol", atol)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            raise ValueError(f"{name} must be a number >= 0, not {v!r}")
    a, core_a = _core_trial(trial_a, "trial_a")
    b, core_b = _core_trial(trial_b, "trial_b")
    if core_a is core_b:  # one Trial twice: the second side reads its own copy
        from ..trials import create_trial

        b, core_b = _core_trial(create_trial(a.path), "trial_b")
    return json.loads(_core.diff(core_a, core_b, float(rtol), float(atol)))
