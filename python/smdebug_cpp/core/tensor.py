"""Tensor: one tensor of a trial, with the methods of smdebug.core.tensor.Tensor.

Values are numpy arrays of the stored dtype and shape that share memory with the C++ library
(no copy): they are read-only (``np.array(v)`` makes a writable copy) and stay valid after the
Trial is gone. Reductions are numpy float64 scalars. Every call releases the GIL while it reads;
see docs/python.md for the thread-safety contract.
"""
from enum import Enum

from .. import _core
from .modes import ModeKeys, SameAsReference, _mode_name


class StepState(SameAsReference, Enum):
    UNAVAILABLE = 0
    AVAILABLE = 1
    NOT_YET_AVAILABLE = 2


def _int(value, argument):
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(f"{argument} must be an integer, not {type(value).__name__}")
    return value.__index__()


def _step(value, argument="step_num"):
    return _int(value, argument)


def _worker(worker):
    if worker is None or isinstance(worker, str):
        return worker
    raise TypeError(f"worker must be a worker name (str) or None, not {type(worker).__name__}")


class Step:
    """What tensor.step(step_num) returns: the step number and, lazily, its value and shape."""

    def __init__(self, tensor, step_num, mode, worker):
        self._tensor = tensor
        self.step_num = step_num
        self._mode = mode
        self._worker = worker

    @property
    def value(self):
        return self._tensor.value(self.step_num, self._mode, self._worker)

    @property
    def shape(self):
        return self._tensor.shape(self.step_num, self._mode, self._worker)

    def reduction_values(self):
        return self._tensor.reduction_values(self.step_num, self._mode, self._worker)

    def reduction_value(self, red_name, abs):
        return self._tensor.reduction_value(self.step_num, red_name, self._mode, self._worker, abs)


class Tensor(_core.TensorBase):
    """A tensor of a trial. Get one with ``trial.tensor(name)``.

    value(step_num, mode=ModeKeys.GLOBAL, worker=None) and reduction_value(step_num, reduction_name,
    mode=ModeKeys.GLOBAL, worker=None, abs=False) come from the C++ base class: analysis loops call
    them once per value, and there they run no Python frame."""

    __slots__ = ("name", "trial", "_core", "cache")

    def __init__(self, name, trial, cache=False):
        super().__init__(trial._core, name)
        self.name = name
        self.trial = trial
        self._core = trial._core
        self.cache = cache

    def __repr__(self):
        return f"<smdebug_cpp Tensor {self.name!r} of trial {self.trial.name!r}>"

    @property
    def original_name(self):
        return self._core.tensor_original_name(self.name)

    def steps(self, mode=ModeKeys.GLOBAL, show_incomplete_steps=False) -> list:
        """Steps at which this tensor was saved: global steps, or mode steps for a mode (D9)."""
        return self._core.tensor_steps(self.name, _mode_name(mode), bool(show_incomplete_steps))

    def workers(self, step_num, mode=ModeKeys.GLOBAL) -> list:
        """Workers that saved this tensor at the step."""
        return self._core.tensor_workers(self.name, _step(step_num), _mode_name(mode))

    def values(self, mode=ModeKeys.GLOBAL, worker=None):
        """{step: value} for every step of ``steps(mode)``, read in one batch."""
        return self._core.tensor_values(self.name, _mode_name(mode), _worker(worker))

    def step(self, step_num, mode=ModeKeys.GLOBAL, worker=None):
        step_num = _step(step_num)
        mode_name = _mode_name(mode)
        worker = _worker(worker)
        self._core.tensor_shape(self.name, step_num, mode_name, worker)  # raises as the reference does
        return Step(self, step_num, mode, worker)

    def shape(self, step_num, mode=ModeKeys.GLOBAL, worker=None):
        """The shape (a tuple), from the index where the writer stored it, else from the value."""
        return self._core.tensor_shape(self.name, _step(step_num), _mode_name(mode), _worker(worker))

    def reduction_values(self, step_num, mode=ModeKeys.GLOBAL, worker=None):
        """{(reduction_name, abs): value} of the reductions stored for the step."""
        return self._core.tensor_reduction_values(self.name, _step(step_num), _mode_name(mode), _worker(worker))

    def prev_steps(self, step, n=None, mode=ModeKeys.GLOBAL):
        """The last `n` steps (all when n is None or 0) of steps(mode) that are <= step."""
        step = _int(step, "step")
        if n is not None:
            n = _int(n, "n")
            if n < 0:
                raise ValueError(f"n must be >= 0, not {n}")
            if n == 0:
                n = None
        return self._core.tensor_prev_steps(self.name, step, n, _mode_name(mode))
