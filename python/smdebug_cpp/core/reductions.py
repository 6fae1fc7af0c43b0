"""Reductions of numpy data and the names of stored reductions, as smdebug.core.reductions has them
(the same numpy functions, so answers are bit-identical to the reference's)."""
import re

import numpy as np

from .. import _core
from ..exceptions import SMDebugValueError
from .reduction_config import ALLOWED_NORMS, ALLOWED_REDUCTIONS

REDUCTIONS_PREFIX = _core.reductions_prefix()


def get_numpy_reduction(reduction_name, numpy_data, abs=False):
    if reduction_name not in ALLOWED_REDUCTIONS and reduction_name not in ALLOWED_NORMS:
        raise SMDebugValueError("Invalid reduction type %s" % reduction_name)
    if abs:
        numpy_data = np.absolute(numpy_data)
    return get_basic_numpy_reduction(reduction_name, numpy_data)


def get_basic_numpy_reduction(reduction_name, numpy_data):
    if reduction_name in ALLOWED_REDUCTIONS:
        if reduction_name in ("min", "max"):
            return (np.amin if reduction_name == "min" else np.amax)(numpy_data)
        return {"mean": np.mean, "prod": np.prod, "std": np.std, "sum": np.sum, "variance": np.var}[reduction_name](numpy_data)
    if reduction_name in ALLOWED_NORMS:
        order = int(reduction_name[1]) if reduction_name in ("l1", "l2") else None
        if np.isscalar(numpy_data):
            numpy_data = [numpy_data]  # np.linalg.norm wants an array
        return np.linalg.norm(numpy_data, ord=order)
    return None


def get_reduction_tensor_name(tensorname, reduction_name, abs, remove_colon_index=True):
    if remove_colon_index:  # as the reference: "w:0" is saved as "w"
        tensorname, reduction_name = re.sub(r":\d+", "", tensorname), re.sub(r":\d+", "", reduction_name)
    return _core.reduction_tensor_name(tensorname, reduction_name, bool(abs))


def reverse_reduction_tensor_name(reduction_tensor_name):
    """'smdebug/reductions/abs_mean/w' -> ('w', 'mean', True)."""
    parsed = _core.parse_reduction_tensor_name(reduction_tensor_name)
    if parsed is None:  # the reference fails on a name that is not a stored reduction's
        raise IndexError(f"{reduction_tensor_name!r} is not a stored reduction's name ({REDUCTIONS_PREFIX}<reduction>/<tensor>)")
    return parsed
