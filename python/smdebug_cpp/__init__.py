"""smdebug_cpp: smdebug's analysis API (trials, tensors, rules) on the smdebug-cpp C++ engine.

Replace ``smdebug`` with ``smdebug_cpp`` in the imports:

    from smdebug_cpp.trials import create_trial
    from smdebug_cpp import modes
    trial = create_trial("s3://bucket/job/debug-output")
    trial.tensor("loss").value(100, mode=modes.TRAIN)

``smdebug_cpp.Hook`` records tensors from any loop and ``smdebug_cpp.pytorch.Hook`` from PyTorch,
through the C++ writer. ``smdebug_cpp.dask`` fans reductions, stacked values and step-local rules out over Dask.
See docs/python.md.
"""
from . import _core
from . import modes  # noqa: F401  (``from smdebug_cpp import modes``; modes.TRAIN as with smdebug)
from .core.collection import CollectionKeys, ReductionConfig, SaveConfig, SaveConfigMode  # noqa: F401
from .hook import Hook  # noqa: F401  (the framework-free hook; smdebug_cpp.pytorch.Hook for PyTorch)

__version__ = _core.__version__
