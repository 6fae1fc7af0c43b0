"""Reductions of numpy data and the names of stored reductions, as smdebug.core.reductions has them
(the same numpy functions, so answers are bit-identical to the reference's)."""
import re

import numpy as np

from ..exceptions import SMDebugValueError
from .reduction_config import ALLOWED_NORMS, ALLOWED_REDUCTIONS

REDUCTIONS_PREFIX = "smdebug/reductions/"


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
    name = f"{reduction_name}/{tensorname}"
    if remove_colon_index:
        name = re.sub(r":\d+", "", name)
    if abs:
        name = "abs_" + name
    return REDUCTIONS_PREFIX + name


def reverse_reduction_tensor_name(reduction_tensor_name):
    """'smdebug/reductions/abs_mean/w' -> ('w', 'mean', True)."""
    rest = reduction_tensor_name.split(REDUCTIONS_PREFIX)[1]
    reduction, tensor_name = rest.split("/", 1)
    if "abs_" in reduction:
        return tensor_name, reduction.split("abs_")[1], True
    return tensor_name, reduction, False
